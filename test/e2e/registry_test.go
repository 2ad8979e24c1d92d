//go:build e2e

package e2e

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"
)

// registry is one running CNCF distribution registry (Debian's docker-registry), bound to
// 127.0.0.1 with its storage in a directory of the suite.
type registry struct {
	Name    string // "plain" or "tls": for logs
	Host    string // "localhost:PORT": the registry part of image references
	Storage string // storage.filesystem.rootdirectory

	// Set only for the TLS registry, which also requires htpasswd (bcrypt) basic auth.
	User, Password string
	CertFile       string // PEM certificate it serves; clients trust it as a CA
	CertDir        string // directory holding only ca.crt (skopeo --cert-dir)
	HostsDir       string // containerd --hosts-dir: HostsDir/HOST/hosts.toml trusts CertFile

	d *daemon
}

// secure reports whether the registry speaks TLS and requires credentials.
func (r *registry) secure() bool { return r.CertFile != "" }

// ref returns the full reference of repoAndTag ("group/helper:v1") in this registry.
func (r *registry) ref(repoAndTag string) string { return r.Host + "/" + repoAndTag }

// startRegistry starts a registry in dir (created). With secure, it serves TLS with a fresh
// self-signed certificate and requires the credentials it generates.
func startRegistry(dir, name string, secure bool) (*registry, error) {
	r := &registry{Name: name, Storage: filepath.Join(dir, "storage")}
	if err := os.MkdirAll(r.Storage, 0o755); err != nil {
		return nil, err
	}
	var extra string
	if secure {
		r.User, r.Password = "e2e-user", "e2e-pw-"+randomHex(8)
		r.CertFile, r.CertDir = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "certs.d")
		keyFile, htpasswdFile := filepath.Join(dir, "key.pem"), filepath.Join(dir, "htpasswd")
		if err := writeSelfSignedCert(r.CertFile, keyFile); err != nil {
			return nil, err
		}
		// skopeo reads every *.crt in --cert-dir as a CA.
		if err := os.MkdirAll(r.CertDir, 0o755); err != nil {
			return nil, err
		}
		if err := copyFile(r.CertFile, filepath.Join(r.CertDir, "ca.crt")); err != nil {
			return nil, err
		}
		// bcrypt, as the registry requires; the registry reads the file only at start.
		out, err := exec.Command("htpasswd", "-Bbn", r.User, r.Password).Output()
		if err != nil {
			return nil, fmt.Errorf("htpasswd: %w", err)
		}
		if err := os.WriteFile(htpasswdFile, out, 0o600); err != nil {
			return nil, err
		}
		extra = fmt.Sprintf(`  tls:
    certificate: %s
    key: %s
auth:
  htpasswd:
    realm: helperbuild-e2e
    path: %s
`, r.CertFile, keyFile, htpasswdFile)
	}

	// A free port can be taken between asking and binding; try a few.
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		r.Host = "localhost:" + strconv.Itoa(port)
		// Never the packaged /etc/docker/registry/config.yml: it listens on all interfaces.
		config := fmt.Sprintf(`version: 0.1
log:
  level: error
  accesslog:
    disabled: true
storage:
  filesystem:
    rootdirectory: %s
  delete:
    enabled: true
  maintenance:
    uploadpurging:
      enabled: false
# Windows images reference foreign layers by URL; distribution refuses every URL unless
# allowed. Allowed: only the closed loopback port testkit.ForeignURL names.
validation:
  manifests:
    urls:
      allow:
        - '^http://127\.0\.0\.1:1/'
http:
  addr: 127.0.0.1:%d
  secret: %s
%s`, r.Storage, port, randomHex(16), extra)
		configFile := filepath.Join(dir, "config.yml")
		if err := os.WriteFile(configFile, []byte(config), 0o600); err != nil {
			return nil, err
		}
		r.d, err = startDaemon("registry "+name, filepath.Join(dir, "registry.log"), os.Environ(),
			"docker-registry", "serve", configFile)
		if err != nil {
			return nil, err
		}
		if lastErr = r.waitReady(); lastErr == nil {
			if secure {
				return r, r.writeHostsDir(filepath.Join(dir, "hosts.d"))
			}
			return r, nil
		}
		_ = r.d.stop(5 * time.Second)
	}
	return nil, lastErr
}

// waitReady polls GET /v2/: 200 for the plain registry; 401 without and 200 with
// credentials for the secure one (so auth really is enforced).
func (r *registry) waitReady() error {
	client, base := r.httpClient(), r.baseURL()
	status := func(withAuth bool) (int, error) {
		req, err := http.NewRequest(http.MethodGet, base+"/v2/", nil)
		if err != nil {
			return 0, err
		}
		if withAuth {
			req.SetBasicAuth(r.User, r.Password)
		}
		resp, err := client.Do(req)
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		return resp.StatusCode, nil
	}
	return r.d.pollUntil(200, 50*time.Millisecond, func() (bool, error) {
		code, err := status(false)
		if err != nil {
			return false, err
		}
		if !r.secure() {
			return code == http.StatusOK, fmt.Errorf("GET /v2/: %d", code)
		}
		if code != http.StatusUnauthorized {
			return false, fmt.Errorf("GET /v2/ without credentials: %d, want 401", code)
		}
		code, err = status(true)
		if err != nil {
			return false, err
		}
		return code == http.StatusOK, fmt.Errorf("GET /v2/ with credentials: %d", code)
	})
}

// baseURL is the registry's root URL.
func (r *registry) baseURL() string {
	if r.secure() {
		return "https://" + r.Host
	}
	return "http://" + r.Host
}

// httpClient returns a client that trusts the registry's certificate.
func (r *registry) httpClient() *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = nil // loopback only, whatever HTTP_PROXY says
	if r.secure() {
		pool := x509.NewCertPool()
		if pemBytes, err := os.ReadFile(r.CertFile); err == nil {
			pool.AppendCertsFromPEM(pemBytes)
		}
		tr.TLSClientConfig = &tls.Config{RootCAs: pool}
	}
	return &http.Client{Transport: tr, Timeout: 10 * time.Second}
}

// skopeoFlags are the flags skopeo needs to reach this registry. role is "" for commands
// with one image (inspect, list-tags), "src" or "dest" for copy.
func (r *registry) skopeoFlags(role string) []string {
	flag := func(name string) string {
		if role == "" {
			return "--" + name
		}
		return "--" + role + "-" + name
	}
	if !r.secure() {
		return []string{flag("tls-verify") + "=false"}
	}
	return []string{flag("cert-dir"), r.CertDir, flag("creds"), r.User + ":" + r.Password}
}

// writeHostsDir writes the containerd registry host configuration that makes containerd
// (which always speaks plain HTTP to localhost otherwise) use TLS with the registry's cert.
func (r *registry) writeHostsDir(dir string) error {
	hostDir := filepath.Join(dir, r.Host)
	if err := os.MkdirAll(hostDir, 0o755); err != nil {
		return err
	}
	hostsToml := fmt.Sprintf("server = %q\n\n[host.%q]\n  ca = %q\n", "https://"+r.Host, "https://"+r.Host, r.CertFile)
	r.HostsDir = dir
	return os.WriteFile(filepath.Join(hostDir, "hosts.toml"), []byte(hostsToml), 0o644)
}

// ctrFlags are the flags `ctr images pull` needs for this registry.
func (r *registry) ctrFlags() []string {
	if !r.secure() {
		return nil // containerd 1.6 speaks plain HTTP to localhost
	}
	return []string{"--hosts-dir", r.HostsDir, "--user", r.User + ":" + r.Password}
}

// stop stops the registry process.
func (r *registry) stop() error { return r.d.stop(10 * time.Second) }

// freePort asks the kernel for a free TCP port on 127.0.0.1.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// writeSelfSignedCert writes a P-256 certificate for localhost and 127.0.0.1, valid for a
// day, and its key, as PEM files.
func writeSelfSignedCert(certFile, keyFile string) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	serial, err := rand.Int(rand.Reader, big.NewInt(1<<62))
	if err != nil {
		return err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "localhost"},
		DNSNames:              []string{"localhost"},
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true, // self-signed: clients trust it as its own CA
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		return err
	}
	return os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600)
}

// randomHex returns n random bytes as hex.
func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand does not fail on Linux
	}
	return hex.EncodeToString(b)
}

// copyFile copies src to dst (mode 0644).
func copyFile(src, dst string) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, b, 0o644)
}
