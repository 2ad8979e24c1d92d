package imageref

import (
	"fmt"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// Transport says where a reference's bytes live.
type Transport int

const (
	// Registry is a repository in an OCI distribution registry.
	Registry Transport = iota
	// Layout is an OCI image layout directory ("oci:DIR[:TAG]").
	Layout
	// Archive is an OCI image layout in a tar file ("oci-archive:FILE[:TAG]").
	Archive
	// Scratch is the empty base image.
	Scratch
)

// Ref is a parsed image reference.
type Ref struct {
	Transport Transport
	// Name is set for Registry references.
	Name name.Reference
	// Path is the directory or file for Layout and Archive references.
	Path string
	// Tag selects an entry of a layout by its org.opencontainers.image.ref.name
	// annotation; empty means the layout's only entry.
	Tag string
	// Digest pins a layout entry ("oci:DIR:TAG@sha256:..."): the entry must
	// have it; without Tag it selects the entry that has it.
	Digest v1.Hash
	raw    string
}

// String returns the reference as the user wrote it (normalised for registries).
func (r Ref) String() string {
	switch r.Transport {
	case Registry:
		return r.Name.String()
	case Scratch:
		return "scratch"
	}
	return r.raw
}

// Parse parses s. insecure lists registry hosts (HOST or HOST:PORT) that may be
// reached over plain HTTP or with an unverified certificate.
func Parse(s string, insecure []string) (Ref, error) {
	switch {
	case s == "":
		return Ref{}, fmt.Errorf("empty image reference: give a registry reference, oci:DIR, oci-archive:FILE or scratch")
	case s == "scratch":
		return Ref{Transport: Scratch, raw: s}, nil
	case strings.HasPrefix(s, "oci:"):
		path, tag, digest, err := splitPathTag(s, strings.TrimPrefix(s, "oci:"))
		if err == nil && path == "" {
			err = fmt.Errorf("image reference %q: oci: needs a directory, e.g. oci:out/oci", s)
		}
		return Ref{Transport: Layout, Path: path, Tag: tag, Digest: digest, raw: s}, err
	case strings.HasPrefix(s, "oci-archive:"):
		path, tag, digest, err := splitPathTag(s, strings.TrimPrefix(s, "oci-archive:"))
		if err == nil && path == "" {
			err = fmt.Errorf("image reference %q: oci-archive: needs a file, e.g. oci-archive:image.tar", s)
		}
		return Ref{Transport: Archive, Path: path, Tag: tag, Digest: digest, raw: s}, err
	case strings.HasPrefix(s, "docker://"):
		s = strings.TrimPrefix(s, "docker://")
	}
	ref, err := name.ParseReference(s, nameOptions(s, insecure)...)
	if err != nil {
		return Ref{}, fmt.Errorf("image reference %q: %w", s, err)
	}
	return Ref{Transport: Registry, Name: ref, raw: s}, nil
}

// ParseTag parses a registry reference that must carry a tag (a destination).
func ParseTag(s string, insecure []string) (name.Tag, error) {
	t, err := name.NewTag(s, nameOptions(s, insecure)...)
	if err != nil {
		return name.Tag{}, fmt.Errorf("tag %q: %w (want REGISTRY/REPOSITORY:TAG)", s, err)
	}
	return t, nil
}

// ParseRepository parses a repository such as registry.example.com/group.
func ParseRepository(s string, insecure []string) (name.Repository, error) {
	r, err := name.NewRepository(s, nameOptions(s, insecure)...)
	if err != nil {
		return name.Repository{}, fmt.Errorf("repository %q: %w (want REGISTRY/PATH, e.g. registry.example.com/group)", s, err)
	}
	return r, nil
}

// nameOptions are the options for parsing the reference s: name.Insecure
// (plain HTTP allowed) only when its registry is in the insecure list.
func nameOptions(s string, insecure []string) []name.Option {
	if IsInsecure(registryOf(s), insecure) {
		return []name.Option{name.Insecure}
	}
	return nil
}

// splitPathTag splits "DIR:TAG" at the first colon, as skopeo does, and
// a trailing "@sha256:<hex>" off as the digest that pins the entry (ref is
// the whole reference, for the error).
func splitPathTag(ref, s string) (path, tag string, digest v1.Hash, err error) {
	if i := strings.LastIndex(s, "@sha256:"); i >= 0 {
		if digest, err = v1.NewHash(s[i+1:]); err != nil {
			return "", "", v1.Hash{}, fmt.Errorf("image reference %q: %w (want @sha256: and 64 hex digits)", ref, err)
		}
		s = s[:i]
	}
	if i := strings.Index(s, ":"); i >= 0 {
		return s[:i], s[i+1:], digest, nil
	}
	return s, "", digest, nil
}

// registryOf returns the host part of a reference, as name would parse it.
func registryOf(s string) string {
	if host, ok := ExplicitRegistry(s); ok {
		return host
	}
	return name.DefaultRegistry
}

// ExplicitRegistry returns the registry host a reference starts with (a
// first element with a dot or a port, or localhost), and false when the
// reference names none and would go to Docker Hub.
func ExplicitRegistry(ref string) (string, bool) {
	host, _, found := strings.Cut(ref, "/")
	if !found || (!strings.ContainsAny(host, ".:") && host != "localhost") {
		return "", false
	}
	return host, true
}

// ValidTag reports whether s is a tag a registry accepts: the distribution
// spec's [A-Za-z0-9_][A-Za-z0-9_.-]{0,127}. (A loop, not that regexp: its
// {0,127} compiles to a program whose building cost every start of
// helperbuild a millisecond.)
func ValidTag(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_':
		case (c == '.' || c == '-') && i > 0:
		default:
			return false
		}
	}
	return true
}

// CheckTag says why s is not a tag a registry accepts, naming the first
// offending character (a tag is [A-Za-z0-9_][A-Za-z0-9_.-]{0,127}); nil
// when it is one.
func CheckTag(s string) error {
	if ValidTag(s) {
		return nil
	}
	for i, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_':
		case r == '.' || r == '-':
			if i == 0 {
				return &TagCharError{Char: r, Pos: 1, First: true}
			}
		default:
			return &TagCharError{Char: r, Pos: len([]rune(s[:i])) + 1}
		}
	}
	if s == "" {
		return fmt.Errorf("a tag cannot be empty")
	}
	return fmt.Errorf("%d characters, a tag has at most 128", len(s))
}

// TagCharError is a character a tag cannot hold (there, or at all).
type TagCharError struct {
	Char  rune
	Pos   int  // 1-based, in characters
	First bool // allowed, but not as the first character
}

func (e *TagCharError) Error() string {
	if e.First {
		return fmt.Sprintf("a tag cannot start with %q", e.Char)
	}
	return fmt.Sprintf("%q (character %d) is not allowed in a tag, only A-Z a-z 0-9 _ . -", e.Char, e.Pos)
}

// IsInsecure reports whether host is in the insecure list.
func IsInsecure(host string, insecure []string) bool {
	for _, h := range insecure {
		if strings.EqualFold(strings.TrimSpace(h), host) {
			return true
		}
	}
	return false
}
