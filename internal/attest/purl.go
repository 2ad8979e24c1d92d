package attest

import (
	"path"
	"sort"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// purl is a package URL (https://github.com/package-url/purl-spec) before
// encoding. Empty parts and empty qualifier values are left out.
type purl struct {
	Type       string
	Namespace  string // segments separated by "/"
	Name       string
	Version    string
	Qualifiers map[string]string
	Subpath    string // segments separated by "/"
}

// String encodes p in the canonical form: every part percent-encoded
// except unreserved characters and ":" (which the spec leaves as is),
// namespace and subpath segment by segment, qualifiers sorted by key and
// "/" left as is in their values (repository_url=registry.example.com/group,
// as the purl-spec's test suite and packageurl-python write it;
// packageurl-go v0.1.7 encodes it as %2F).
func (p purl) String() string {
	var b strings.Builder
	b.WriteString("pkg:")
	b.WriteString(strings.ToLower(p.Type))
	b.WriteByte('/')
	if p.Namespace != "" {
		b.WriteString(escapeSegments(p.Namespace))
		b.WriteByte('/')
	}
	b.WriteString(escapePurl(p.Name))
	if p.Version != "" {
		b.WriteByte('@')
		b.WriteString(escapePurl(p.Version))
	}
	keys := make([]string, 0, len(p.Qualifiers))
	for k, v := range p.Qualifiers {
		if v != "" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for i, k := range keys {
		if i == 0 {
			b.WriteByte('?')
		} else {
			b.WriteByte('&')
		}
		b.WriteString(strings.ToLower(k))
		b.WriteByte('=')
		b.WriteString(escapeQualifier(p.Qualifiers[k]))
	}
	if p.Subpath != "" {
		b.WriteByte('#')
		b.WriteString(escapeSegments(p.Subpath))
	}
	return b.String()
}

func escapeSegments(s string) string {
	segs := strings.Split(strings.Trim(s, "/"), "/")
	for i, seg := range segs {
		segs[i] = escapePurl(seg)
	}
	return strings.Join(segs, "/")
}

// escapeQualifier is escapePurl keeping "/" too.
func escapeQualifier(s string) string {
	segs := strings.Split(s, "/")
	for i, seg := range segs {
		segs[i] = escapePurl(seg)
	}
	return strings.Join(segs, "/")
}

// escapePurl percent-encodes everything but A-Z a-z 0-9 - . _ ~ and ":".
func escapePurl(s string) string {
	const hexdigits = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9',
			c == '-', c == '.', c == '_', c == '~', c == ':':
			b.WriteByte(c)
		default:
			b.WriteByte('%')
			b.WriteByte(hexdigits[c>>4])
			b.WriteByte(hexdigits[c&15])
		}
	}
	return b.String()
}

// golangPurl is the purl of Go module path at version: the last path
// element is the name, the rest the namespace.
func golangPurl(modPath, version, subpath string) purl {
	ns, name := path.Split(modPath)
	return purl{Type: "golang", Namespace: strings.TrimSuffix(ns, "/"), Name: name, Version: version, Subpath: subpath}
}

// ociPurl is the purl of one image manifest: pkg:oci/NAME@DIGEST with the
// platform (arch, os, variant), the repository it lives in and the tag it
// was named by, when known.
func ociPurl(name, repository, tag string, digest v1.Hash, p *v1.Platform) purl {
	q := map[string]string{"repository_url": repository, "tag": tag}
	if p != nil {
		q["arch"], q["os"], q["variant"] = p.Architecture, p.OS, p.Variant
	}
	return purl{Type: "oci", Name: strings.ToLower(name), Version: digest.String(), Qualifiers: q}
}
