// Package app is the body of bigmain, a benchmark workload for helperbuild.
// It really uses client-go, the AWS SDK (S3), go-containerregistry, cobra and
// golang.org/x/net, so the linker keeps enough of them for a binary of the
// size of gitlab-runner's. It is never run by the benchmark.
package app

import (
	"context"
	"fmt"
	"net/http"
	"os"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/crane"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/spf13/cobra"
	"golang.org/x/net/html"
	"golang.org/x/net/http2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// Main runs the command line; run names the benchmark run the binary was
// linked for and extra is the size of any embedded payload.
func Main(run string, extra int) {
	root := &cobra.Command{Use: "bigmain", Short: fmt.Sprintf("benchmark workload (run %s, %d extra bytes)", run, extra)}
	root.AddCommand(kubeCmd(), s3Cmd(), registryCmd(), httpCmd())
	if err := root.Execute(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func kubeCmd() *cobra.Command {
	var kubeconfig string
	cmd := &cobra.Command{
		Use: "kube",
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
			if err != nil {
				return err
			}
			cs, err := kubernetes.NewForConfig(cfg)
			if err != nil {
				return err
			}
			dyn, err := dynamic.NewForConfig(cfg)
			if err != nil {
				return err
			}
			_ = dyn
			f := informers.NewSharedInformerFactory(cs, 0)
			f.Core().V1().Pods().Informer()
			f.Apps().V1().Deployments().Informer()
			f.Batch().V1().Jobs().Informer()
			pods, err := cs.CoreV1().Pods("").List(cmd.Context(), metav1.ListOptions{})
			if err != nil {
				return err
			}
			fmt.Println(len(pods.Items))
			return nil
		},
	}
	cmd.Flags().StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig")
	return cmd
}

func s3Cmd() *cobra.Command {
	return &cobra.Command{
		Use: "s3 BUCKET",
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := awsconfig.LoadDefaultConfig(cmd.Context())
			if err != nil {
				return err
			}
			c := s3.NewFromConfig(cfg)
			out, err := c.ListObjectsV2(cmd.Context(), &s3.ListObjectsV2Input{Bucket: aws.String(args[0])})
			if err != nil {
				return err
			}
			for _, o := range out.Contents {
				fmt.Println(aws.ToString(o.Key))
			}
			_, err = c.PutObject(context.Background(), &s3.PutObjectInput{Bucket: aws.String(args[0]), Key: aws.String("x")})
			return err
		},
	}
}

func registryCmd() *cobra.Command {
	return &cobra.Command{
		Use: "registry REF",
		RunE: func(cmd *cobra.Command, args []string) error {
			ref, err := name.ParseReference(args[0])
			if err != nil {
				return err
			}
			img, err := remote.Image(ref, remote.WithAuthFromKeychain(authn.DefaultKeychain), remote.WithContext(cmd.Context()))
			if err != nil {
				return err
			}
			d, err := img.Digest()
			if err != nil {
				return err
			}
			fmt.Println(d)
			return crane.Copy(args[0], args[0]+"-copy")
		},
	}
}

func httpCmd() *cobra.Command {
	return &cobra.Command{
		Use: "http URL",
		RunE: func(cmd *cobra.Command, args []string) error {
			tr := &http2.Transport{}
			resp, err := (&http.Client{Transport: tr}).Get(args[0])
			if err != nil {
				return err
			}
			defer resp.Body.Close()
			doc, err := html.Parse(resp.Body)
			if err != nil {
				return err
			}
			fmt.Println(doc.FirstChild != nil)
			return nil
		},
	}
}
