package release

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/helperbuild/helperbuild/internal/fixture/testkit"
	"github.com/helperbuild/helperbuild/internal/imageref"
	"github.com/helperbuild/helperbuild/internal/manifest"
	"github.com/helperbuild/helperbuild/internal/merge"
	"github.com/helperbuild/helperbuild/internal/part"
	"github.com/helperbuild/helperbuild/internal/platform"
	"github.com/helperbuild/helperbuild/internal/product"
	"github.com/helperbuild/helperbuild/internal/publish"
)

// benchPlatforms are sixteen platforms Go builds for; the first five are
// the usual release.
const benchPlatforms = "linux/amd64,linux/arm64,linux/arm/v7,linux/ppc64le,linux/s390x," +
	"linux/riscv64,linux/386,linux/arm/v6,linux/arm/v5,linux/amd64/v3,linux/ppc64," +
	"linux/mips64le,linux/mips64,linux/mipsle,linux/mips,linux/loong64"

// BenchmarkMerge measures merge (merge.New, Run, mergedResult and the publishing of
// indexes and tags) of 5 and 16 platforms x 2 images whose jobs pushed to
// a local docker-registry, and counts its requests. Each iteration merges
// parts whose index annotations differ from the last, so every index is
// new to the registry, as in a release. Needs docker-registry on PATH
// (scripts/install-test-deps.sh):
//
//	go test -run '^$' -bench BenchmarkMerge -benchtime 20x ./internal/release/
func BenchmarkMerge(b *testing.B) {
	host := dockerRegistry(b)
	all, err := platform.ParseList(benchPlatforms)
	if err != nil {
		b.Fatal(err)
	}
	for _, n := range []int{5, 16} {
		b.Run(fmt.Sprintf("platforms=%d/images=2", n), func(b *testing.B) {
			parts, layers := benchParts(b, host, all[:n], "helper", "runner")
			counter := &countingTransport{next: http.DefaultTransport.(*http.Transport).Clone()}
			opts := merge.Options{Images: imageref.Options{Insecure: []string{host}, Transport: counter}, ConfigAgrees: configAgrees}
			run := 0
			for b.Loop() {
				run++
				for _, f := range parts {
					for i := range f.Images {
						f.Images[i].Annotations["org.example.bench.run"] = fmt.Sprint(run)
					}
				}
				m, err := merge.New(parts, opts)
				if err != nil {
					b.Fatal(err)
				}
				checked, err := m.Run(b.Context())
				if err != nil {
					b.Fatal(err)
				}
				res, err := mergedResult(checked)
				if err != nil {
					b.Fatal(err)
				}
				dest, err := publish.NewRegistry(placedOf(m), m.Names(), opts.Images, nil)
				if err != nil {
					b.Fatal(err)
				}
				if err := dest.Publish(b.Context(), publishImages(res)); err != nil {
					b.Fatal(err)
				}
			}
			counts, total := counter.take()
			b.ReportMetric(float64(total)/float64(run), "requests/op")
			for _, k := range []string{"GET manifest", "GET blob", "HEAD manifest", "PUT manifest", "GET other"} {
				b.ReportMetric(float64(counts[k])/float64(run), strings.ReplaceAll(k, " ", "-")+"/op")
			}
			for _, d := range counter.blobGets() {
				if layers[d] {
					b.Fatalf("merge downloaded the layer %s", d)
				}
			}
			if counts["PATCH blob"] > 0 {
				b.Fatalf("merge uploaded blob bytes: %v", counts)
			}
		})
	}
}

// benchParts pushes one small image per platform and name to
// host/bench/NAME and returns each platform's part, and the digests of
// the layers.
func benchParts(b *testing.B, host string, ps []v1.Platform, names ...string) ([]*part.File, map[string]bool) {
	b.Helper()
	layers := map[string]bool{}
	meta := manifest.Meta{Created: epoch, Revision: "abc", Version: "v1.2.3"}
	var out []*part.File
	for _, p := range ps {
		f := &part.File{SchemaVersion: part.SchemaVersion, MediaType: part.MediaType, Path: platform.Format(p),
			Version: meta.Version, Revision: meta.Revision, Created: meta.Created, Platforms: strings.Split(platform.FormatList(ps), ",")}
		for _, n := range names {
			repo := host + "/bench/" + n
			img := testkit.Image(b, p, 1024, 2)
			ls, err := img.Layers()
			if err != nil {
				b.Fatal(err)
			}
			for _, l := range ls {
				d, _ := l.Digest()
				layers[d.String()] = true
			}
			d, err := img.Digest()
			if err != nil {
				b.Fatal(err)
			}
			ref, err := imageref.ParseRepository(repo, []string{host})
			if err != nil {
				b.Fatal(err)
			}
			if err := remote.Write(ref.Digest(d.String()), img); err != nil {
				b.Fatal(err)
			}
			size, _ := img.Size()
			mt, _ := img.MediaType()
			f.Images = append(f.Images, part.Image{Name: n, Repository: repo, Annotations: meta.Annotations("", v1.Hash{}),
				Tags: []string{"v1.2.3"}, Manifests: []v1.Descriptor{{MediaType: mt, Digest: d, Size: size, Platform: &p}},
				PlatformTags: []part.PlatformTag{{Platform: platform.Format(p), Digest: d, Tag: strings.ReplaceAll(platform.Format(p), "/", "-") + "-v1.2.3"}}})
		}
		out = append(out, f)
	}
	return out, layers
}

// publishImages is res as publish takes it.
func publishImages(res *product.Result) []publish.Image {
	out := make([]publish.Image, 0, len(res.Images))
	for _, img := range res.Images {
		out = append(out, img.Publish())
	}
	return out
}

// countingTransport counts requests by method and kind ("GET manifest",
// "HEAD blob", "PATCH blob") and keeps the digests of the blobs GET.
type countingTransport struct {
	next http.RoundTripper
	mu   sync.Mutex
	n    map[string]int
	gets []string
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	kind := "other"
	switch {
	case strings.Contains(r.URL.Path, "/manifests/"):
		kind = "manifest"
	case strings.Contains(r.URL.Path, "/blobs/"):
		kind = "blob"
	}
	c.mu.Lock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[r.Method+" "+kind]++
	if i := strings.Index(r.URL.Path, "/blobs/sha256:"); i >= 0 && r.Method == http.MethodGet {
		c.gets = append(c.gets, r.URL.Path[i+len("/blobs/"):])
	}
	c.mu.Unlock()
	return c.next.RoundTrip(r)
}

// take returns the counts so far and their total, and forgets them.
func (c *countingTransport) take() (map[string]int, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	out, total := c.n, 0
	for _, v := range out {
		total += v
	}
	c.n = nil
	return out, total
}

// blobGets are the digests of the blobs downloaded so far.
func (c *countingTransport) blobGets() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.gets...)
}

// dockerRegistry starts the CNCF registry on a free 127.0.0.1 port with
// its storage in a temporary directory, stopped (by PID) when b ends.
func dockerRegistry(b *testing.B) string {
	b.Helper()
	bin, err := exec.LookPath("docker-registry")
	if err != nil {
		b.Fatal("docker-registry is not installed: run scripts/install-test-deps.sh")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	dir := b.TempDir()
	cfg := filepath.Join(dir, "config.yml")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf(`version: 0.1
log: {level: error, accesslog: {disabled: true}}
storage: {filesystem: {rootdirectory: %s}}
http: {addr: %s, secret: bench}
`, filepath.Join(dir, "data"), addr)), 0o644); err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(bin, "serve", cfg)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	})
	for range 200 {
		if resp, err := http.Get("http://" + addr + "/v2/"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return addr
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	b.Fatal("docker-registry did not answer /v2/ within 10s")
	return ""
}
