// Command mid is the benchmark's medium workload (issue 28): a main package
// of about 10 MB for linux/amd64 that really uses three modules from the
// module proxy (cobra, go-containerregistry, golang.org/x/net), the size of
// a typical Go CLI. It is never run by the benchmark.
package main

import (
	"fmt"
	"net/http"
	"os"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/crane"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/spf13/cobra"
	"golang.org/x/net/http2"
)

// benchRun is set with -ldflags "-X main.benchRun=N" so that every
// benchmark run links a different binary.
var benchRun = "0"

func main() {
	root := &cobra.Command{Use: "mid", Short: "benchmark workload (run " + benchRun + ")"}
	root.AddCommand(&cobra.Command{
		Use:  "digest REF",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ref, err := name.ParseReference(args[0])
			if err != nil {
				return err
			}
			t := &http.Transport{}
			if err := http2.ConfigureTransport(t); err != nil {
				return err
			}
			desc, err := remote.Head(ref, remote.WithAuthFromKeychain(authn.DefaultKeychain), remote.WithTransport(t))
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), desc.Digest)
			return nil
		},
	}, &cobra.Command{
		Use:  "copy SRC DST",
		Args: cobra.ExactArgs(2),
		RunE: func(_ *cobra.Command, args []string) error { return crane.Copy(args[0], args[1]) },
	})
	if err := root.Execute(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
