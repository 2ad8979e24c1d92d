package registry

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
)

// CheckPush fails when the credentials from kc cannot push to repo, so a
// release can stop before compiling anything. Like a real push it starts a
// blob upload, then cancels it.
func CheckPush(ctx context.Context, repo name.Repository, kc authn.Keychain, t http.RoundTripper) error {
	auth, err := authn.Resolve(ctx, kc, repo)
	if err != nil {
		return fmt.Errorf("credentials for %s: %w", repo, err)
	}
	tr, err := transport.NewWithContext(ctx, repo.Registry, auth, t, []string{repo.Scope(transport.PushScope)})
	if err != nil {
		return atRegistry(repo, err)
	}
	client := &http.Client{Transport: tr}
	u := url.URL{Scheme: repo.Registry.Scheme(), Host: repo.RegistryStr(), Path: "/v2/" + repo.RepositoryStr() + "/blobs/uploads/"}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return atRegistry(repo, err)
	}
	defer resp.Body.Close()
	if err := transport.CheckError(resp, http.StatusAccepted); err != nil {
		return fmt.Errorf("registry %s: cannot push to %s: %w", repo.RegistryStr(), repo.RepositoryStr(), Explain(err))
	}
	if loc := resp.Header.Get("Location"); loc != "" {
		if target, err := resp.Request.URL.Parse(loc); err == nil {
			if del, err := http.NewRequestWithContext(ctx, http.MethodDelete, target.String(), nil); err == nil {
				if r, err := client.Do(del); err == nil {
					r.Body.Close()
				}
			}
		}
	}
	return nil
}

// atRegistry explains err, naming the registry unless the explanation does.
func atRegistry(repo name.Repository, err error) error {
	err = Explain(err)
	var re *RegistryError
	if errors.As(err, &re) {
		return err
	}
	return fmt.Errorf("registry %s: %w", repo.RegistryStr(), err)
}
