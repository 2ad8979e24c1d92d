package registry

import (
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"syscall"

	"github.com/google/go-containerregistry/pkg/v1/remote/transport"

	"github.com/helperbuild/helperbuild/internal/imageref"
	"github.com/helperbuild/helperbuild/internal/retry"
)

// ErrorKind says what a user can do about a RegistryError.
type ErrorKind int

// Kinds of RegistryError.
const (
	// Untrusted: the registry's TLS certificate was not accepted.
	Untrusted ErrorKind = iota + 1
	// Unreachable: no connection could be made.
	Unreachable
	// Unauthorized: the registry refused the credentials (401) or the
	// access (403).
	Unauthorized
	// PlainHTTP: the registry answered an HTTPS request in plain HTTP.
	PlainHTTP
	// NotFound: the registry answered 404 (MANIFEST_UNKNOWN, NAME_UNKNOWN,
	// BLOB_UNKNOWN): it does not hold what was asked for (ExplainRead makes
	// it imageref.ErrNotFound).
	NotFound
	// Answered: any other error status; the registry's codes and messages
	// without their Go-formatted details.
	Answered
)

// RegistryError is a registry failure said in one line, with the host and
// the way out, instead of go-containerregistry's and net/http's text (every
// URL tried, both schemes of a ping, the scopes as a Go map). It unwraps to
// the original error.
type RegistryError struct {
	Host string
	Kind ErrorKind
	Err  error
	what string // the failure, e.g. "connection refused"
}

func (e *RegistryError) Error() string {
	switch e.Kind {
	case Untrusted:
		if e.what == "" {
			return fmt.Sprintf("the certificate of %s is signed by an unknown authority: trust its CA with SSL_CERT_FILE=ca.pem or the system CA store (update-ca-certificates), or pass --insecure-registry %s", e.Host, e.Host)
		}
		return fmt.Sprintf("the certificate of %s is not valid (%s): fix it, or pass --insecure-registry %s", e.Host, e.what, e.Host)
	case Unreachable:
		return fmt.Sprintf("cannot reach registry %s: %s; check the address and that the registry is up", e.Host, e.what)
	case Unauthorized:
		return e.what
	case PlainHTTP:
		return fmt.Sprintf("%s answered in plain HTTP, not HTTPS: if it only speaks HTTP, pass --insecure-registry %s (127.0.0.1 and localhost need no flag)", e.Host, e.Host)
	case NotFound, Answered:
		return e.what
	}
	return e.Err.Error()
}

func (e *RegistryError) Unwrap() error { return e.Err }

// DescribeRead names what was read (a tag or digest a user named) and the
// way out: a 404 is imageref.ErrNotFound, said with the registry's codes and no Go
// map of their details; anything else is Explain's.
func DescribeRead(what string, err error) error {
	var terr *transport.Error
	if errors.As(err, &terr) && terr.StatusCode == http.StatusNotFound {
		return imageref.MarkNotFound(fmt.Errorf("%s: not found in the registry (%s); check the repository and the tag or digest, or publish it first", what, diagnostics(terr)))
	}
	return fmt.Errorf("%s: %w", what, Explain(err))
}

// ExplainRead is Explain for the read of a manifest a user named (a tag,
// a digest, a part file's entry): there a 404 is imageref.ErrNotFound. Elsewhere
// (a blob upload, a referrers route) a 404 is only an error.
func ExplainRead(err error) error {
	err = Explain(err)
	var re *RegistryError
	if errors.As(err, &re) && re.Kind == NotFound {
		return imageref.MarkNotFound(err)
	}
	return err
}

// Explain turns a registry failure a user can act on (an untrusted
// certificate, a registry that cannot be reached, refused credentials)
// into a *RegistryError; any other error is returned as it is. Reading and
// publishing both use it, so the advice is the same wherever it fails.
func Explain(err error) error {
	var re *RegistryError
	if err == nil || errors.As(err, &re) {
		return err
	}
	var terr *transport.Error
	if errors.As(err, &terr) && (terr.StatusCode == http.StatusUnauthorized || terr.StatusCode == http.StatusForbidden) {
		host := hostOf(err)
		what := "authentication failed for " + host
		if terr.StatusCode == http.StatusForbidden {
			what = host + " denied access"
		}
		if d := diagnostics(terr); d != "" {
			what += " (" + d + ")"
		}
		return &RegistryError{Host: host, Kind: Unauthorized, Err: err, what: what}
	}
	var unknown x509.UnknownAuthorityError
	var hostname x509.HostnameError
	var invalid x509.CertificateInvalidError
	switch {
	case errors.As(err, &unknown):
		return &RegistryError{Host: hostOf(err), Kind: Untrusted, Err: err}
	case errors.As(err, &hostname):
		return &RegistryError{Host: hostOf(err), Kind: Untrusted, Err: err, what: hostname.Error()}
	case errors.As(err, &invalid):
		return &RegistryError{Host: hostOf(err), Kind: Untrusted, Err: err, what: invalid.Error()}
	}
	if what := privateRealm(err); what != "" {
		return &RegistryError{Host: hostOf(err), Kind: Answered, Err: err, what: what}
	}
	// net/http says so only in text; the registry did answer, so this comes
	// before unreachable. A ping that went on in plain HTTP (loopback, an
	// --insecure-registry host) and got a status is about that status.
	if !errors.As(err, &terr) && strings.Contains(err.Error(), "server gave HTTP response to HTTPS client") {
		return &RegistryError{Host: hostOf(err), Kind: PlainHTTP, Err: err}
	}
	if what := unreachable(err); what != "" {
		var rerr *retry.Error
		if errors.As(err, &rerr) && rerr.Attempts > 1 {
			what += fmt.Sprintf(" (gave up after %d attempts)", rerr.Attempts)
		}
		return &RegistryError{Host: hostOf(err), Kind: Unreachable, Err: err, what: what}
	}
	if errors.As(err, &terr) {
		return answered(err, terr)
	}
	return err
}

// privateRealmText is how go-containerregistry (0.22) refuses a token realm
// on a private or link-local IP literal that is not the registry's own
// host:port (its guard against a registry sending credentials elsewhere).
var privateRealmText = regexp.MustCompile(`invalid realm in www-authenticate: realm host "([^"]+)" is a private or link-local address`)

// privateRealm explains that refusal with the way out; "" for any other
// error.
func privateRealm(err error) string {
	m := privateRealmText.FindStringSubmatch(err.Error())
	if m == nil {
		return ""
	}
	prefix := ""
	if h := hostOf(err); h != unknownHost {
		prefix = "registry " + h + ": "
	}
	return fmt.Sprintf("%sits token service (realm) is at %s, a private IP address that is not the registry's own host:port; go-containerregistry, which helperbuild uses, refuses that (credentials must not be sent to another internal address): give the token service a host name (self-managed GitLab: an external_url with a DNS name rather than an IP address) or serve the realm on the registry's own host:port", prefix, m[1])
}

// unreachable names why no connection could be made; "" when one was.
func unreachable(err error) string {
	var dns *net.DNSError
	if errors.As(err, &dns) {
		if dns.IsNotFound {
			return "no such host " + dns.Name
		}
		return "cannot resolve " + dns.Name
	}
	var op *net.OpError
	if !errors.As(err, &op) || op.Op != "dial" {
		return ""
	}
	var errno syscall.Errno
	switch {
	case errors.As(err, &errno):
		return errno.Error()
	case op.Timeout():
		return "connection timed out"
	}
	return "cannot connect"
}

// answered is a registry's error status said as the request and the
// registry's codes and messages, without go-containerregistry's Go map of
// each one's details (`map[Tag:v9.9.9]`); a 404 is NotFound.
func answered(err error, terr *transport.Error) *RegistryError {
	what := diagnostics(terr)
	if terr.Request != nil && terr.Request.URL != nil {
		u := *terr.Request.URL
		u.RawQuery, u.User = "", nil // upload locations carry session state in the query
		what = fmt.Sprintf("%s %s: %s", terr.Request.Method, u.String(), what)
		what += foreignURLs(terr)
	}
	kind := Answered
	if terr.StatusCode == http.StatusNotFound {
		kind = NotFound
	}
	return &RegistryError{Host: hostOf(err), Kind: kind, Err: err, what: what}
}

// foreignURLs explains a manifest put refused with MANIFEST_BLOB_UNKNOWN:
// that is how distribution (v3 by default, 2.8 when configured) refuses a
// foreign layer whose URLs its validation.manifests.urls policy does not
// allow, naming the layer's digest; "" for any other error.
func foreignURLs(terr *transport.Error) string {
	if terr.Request.Method != http.MethodPut || !strings.Contains(terr.Request.URL.Path, "/manifests/") {
		return ""
	}
	for _, d := range terr.Errors {
		if d.Code != transport.ManifestBlobUnknownErrorCode {
			continue
		}
		layer := "a layer the manifest names"
		if d.Detail != nil {
			layer = fmt.Sprintf("%v", d.Detail)
		}
		return fmt.Sprintf(" (if %s is a foreign layer, a Windows base's OS layer referenced by URL, the registry refuses its URL: distribution v3 allows no layer URL by default; a Windows image on a base from MCR or Docker Hub needs, in the registry's config, validation: manifests: urls: allow: ['^https://mcr\\.microsoft\\.com/'], or the URLs the base's foreign layers name)", layer)
	}
	return ""
}

// diagnostics are the registry's error codes and messages, without the
// details (go-containerregistry prints those as a Go map).
func diagnostics(terr *transport.Error) string {
	var out []string
	for _, d := range terr.Errors {
		out = append(out, strings.TrimSpace(string(d.Code)+": "+d.Message))
	}
	if len(out) == 0 {
		return fmt.Sprintf("%d %s", terr.StatusCode, http.StatusText(terr.StatusCode))
	}
	return strings.Join(out, "; ")
}

// hostOf is the host the failed request went to.
func hostOf(err error) string {
	var terr *transport.Error
	if errors.As(err, &terr) && terr.Request != nil && terr.Request.URL != nil {
		return terr.Request.URL.Host
	}
	var uerr *url.Error
	if errors.As(err, &uerr) {
		if u, perr := url.Parse(uerr.URL); perr == nil && u.Host != "" {
			return u.Host
		}
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Addr != nil {
		return op.Addr.String()
	}
	return unknownHost
}

// unknownHost is hostOf's answer when err names no host.
const unknownHost = "the registry"
