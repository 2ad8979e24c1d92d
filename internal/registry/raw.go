package registry

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Raw reaches each repository with plain HTTP requests (on the transport
// it is given: the run's retry stack), for what go-containerregistry's
// writers would do differently: they treat any
// manifest with a subject as a referrer and, on a registry without the
// referrers API, read and write the tag sha256-<subject hex> at once. A
// release PUTs those manifests by digest itself and writes fallback tags
// in its tag phase (publish does both with Raw).
type Raw struct {
	keychain  authn.Keychain
	transport http.RoundTripper

	mu      sync.Mutex
	clients map[string]*http.Client
}

// NewRaw is a Raw with kc's credentials (nil: anonymous) over t (nil:
// http.DefaultTransport).
func NewRaw(kc authn.Keychain, t http.RoundTripper) *Raw {
	if kc == nil {
		kc = authn.NewMultiKeychain() // anonymous
	}
	if t == nil {
		t = http.DefaultTransport
	}
	return &Raw{keychain: kc, transport: t, clients: map[string]*http.Client{}}
}

// client is an authenticated client for repo, made once.
func (c *Raw) client(ctx context.Context, repo name.Repository) (*http.Client, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if cl, ok := c.clients[repo.String()]; ok {
		return cl, nil
	}
	auth, err := authn.Resolve(ctx, c.keychain, repo)
	if err != nil {
		return nil, fmt.Errorf("credentials for %s: %w", repo, err)
	}
	tr, err := transport.NewWithContext(ctx, repo.Registry, auth, c.transport, []string{repo.Scope(transport.PushScope)})
	if err != nil {
		return nil, atRegistry(repo, err)
	}
	cl := &http.Client{Transport: tr}
	c.clients[repo.String()] = cl
	return cl, nil
}

func repoURL(repo name.Repository, path string) string {
	u := url.URL{Scheme: repo.Registry.Scheme(), Host: repo.RegistryStr(), Path: "/v2/" + repo.RepositoryStr() + path}
	return u.String()
}

// PutManifest PUTs raw (of media type mt) as repo's manifest ref, a digest
// or a tag.
func (c *Raw) PutManifest(ctx context.Context, repo name.Repository, ref string, mt types.MediaType, raw []byte) error {
	cl, err := c.client(ctx, repo)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, repoURL(repo, "/manifests/"+ref), bytes.NewReader(raw))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", string(mt))
	resp, err := cl.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	return transport.CheckError(resp, http.StatusOK, http.StatusCreated, http.StatusAccepted)
}

// manifestAccept is every manifest media type a fallback tag may resolve to.
var manifestAccept = strings.Join([]string{
	string(types.OCIImageIndex), string(types.OCIManifestSchema1),
	string(types.DockerManifestList), string(types.DockerManifestSchema2),
}, ", ")

// GetManifest reads repo's manifest ref: found false on 404.
func (c *Raw) GetManifest(ctx context.Context, repo name.Repository, ref string) (raw []byte, mt types.MediaType, found bool, err error) {
	cl, err := c.client(ctx, repo)
	if err != nil {
		return nil, "", false, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, repoURL(repo, "/manifests/"+ref), nil)
	if err != nil {
		return nil, "", false, err
	}
	req.Header.Set("Accept", manifestAccept)
	resp, err := cl.Do(req)
	if err != nil {
		return nil, "", false, err
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound {
		return nil, "", false, nil
	}
	if err := transport.CheckError(resp, http.StatusOK); err != nil {
		return nil, "", false, err
	}
	raw, err = io.ReadAll(io.LimitReader(resp.Body, maxManifest+1))
	if err != nil {
		return nil, "", false, err
	}
	if len(raw) > maxManifest {
		return nil, "", false, fmt.Errorf("manifest %s of %s is larger than %d bytes", ref, repo, maxManifest)
	}
	return raw, types.MediaType(resp.Header.Get("Content-Type")), true, nil
}

// maxManifest bounds a manifest read back (the registries' own limit is 4 MiB).
const maxManifest = 4 << 20

// HasReferrersAPI asks repo's registry for subject's referrers: an image
// index back means it keeps them itself; 404 (or 400, 405 as some
// registries answer an unknown route) means a client keeps the fallback
// tag, as the distribution spec says.
func (c *Raw) HasReferrersAPI(ctx context.Context, repo name.Repository, subject v1.Hash) (bool, error) {
	_, api, err := c.ListedReferrers(ctx, repo, subject)
	return api, err
}

// ListedReferrers is HasReferrersAPI with what the API lists: the digests
// of subject's referrers, when api is true.
func (c *Raw) ListedReferrers(ctx context.Context, repo name.Repository, subject v1.Hash) (listed []v1.Hash, api bool, err error) {
	cl, err := c.client(ctx, repo)
	if err != nil {
		return nil, false, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, repoURL(repo, "/referrers/"+subject.String()), nil)
	if err != nil {
		return nil, false, err
	}
	req.Header.Set("Accept", string(types.OCIImageIndex))
	resp, err := cl.Do(req)
	if err != nil {
		return nil, false, err
	}
	defer resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusNotFound, http.StatusBadRequest, http.StatusMethodNotAllowed:
		return nil, false, nil
	case http.StatusUnauthorized, http.StatusForbidden:
		// Some registries and proxies refuse the route rather than serve it;
		// for the release it is no API here. If the credentials are what the
		// registry refuses, the fallback tag's read fails and says so.
		return nil, false, nil
	}
	if err := transport.CheckError(resp, http.StatusOK); err != nil {
		return nil, false, fmt.Errorf("referrers of %s@%s: %w", repo, subject, Explain(err))
	}
	var idx struct {
		MediaType types.MediaType `json:"mediaType"`
		Manifests []struct {
			Digest v1.Hash `json:"digest"`
		} `json:"manifests"`
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxManifest))
	if err != nil {
		return nil, false, err
	}
	if err := json.Unmarshal(body, &idx); err != nil || idx.MediaType != types.OCIImageIndex {
		return nil, false, nil // a 200 that is not a referrers index: some proxy's page, no API
	}
	for _, m := range idx.Manifests {
		listed = append(listed, m.Digest)
	}
	return listed, true, nil
}
