// Command held is the benchmark's held-out-like workload (issue 41): a CLI
// of about 10 MB for linux/amd64, like the program of the outside
// measurement the issue reports (a medium Go program for five platforms on a
// busybox base), built from the same modules as mid but not the same
// program: cobra, go-containerregistry's remote and mutate packages and the
// standard library's TLS and JSON. It is never run by the benchmark.
package main

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/spf13/cobra"
)

// benchRun is set with -ldflags "-X main.benchRun=N" so that every
// benchmark run links a different binary.
var benchRun = "0"

func main() {
	root := &cobra.Command{Use: "held", Short: "benchmark workload (run " + benchRun + ")"}
	root.AddCommand(&cobra.Command{
		Use:  "config REF",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ref, err := name.ParseReference(args[0])
			if err != nil {
				return err
			}
			img, err := remote.Image(ref, remote.WithAuthFromKeychain(authn.DefaultKeychain))
			if err != nil {
				return err
			}
			cf, err := img.ConfigFile()
			if err != nil {
				return err
			}
			enc := json.NewEncoder(cmd.OutOrStdout())
			enc.SetIndent("", "  ")
			return enc.Encode(cf.Config)
		},
	}, &cobra.Command{
		Use:  "label REF KEY=VALUE",
		Args: cobra.ExactArgs(2),
		RunE: func(_ *cobra.Command, args []string) error {
			ref, err := name.ParseReference(args[0])
			if err != nil {
				return err
			}
			img, err := remote.Image(ref, remote.WithAuthFromKeychain(authn.DefaultKeychain))
			if err != nil {
				return err
			}
			cf, err := img.ConfigFile()
			if err != nil {
				return err
			}
			cfg := cf.Config.DeepCopy()
			if cfg.Labels == nil {
				cfg.Labels = map[string]string{}
			}
			k, v, _ := cutKV(args[1])
			cfg.Labels[k] = v
			out, err := mutate.Config(img, *cfg)
			if err != nil {
				return err
			}
			return remote.Write(ref, out, remote.WithAuthFromKeychain(authn.DefaultKeychain))
		},
	})
	if err := root.Execute(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func cutKV(s string) (string, string, bool) {
	for i := range len(s) {
		if s[i] == '=' {
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}
