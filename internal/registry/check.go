package registry

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

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
		if scopeErr := missingPushScope(ctx, client, repo, auth, resp, err); scopeErr != nil {
			return scopeErr
		}
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

// missingPushScope names the scope a token lacks when a token registry
// refused the upload for insufficient scope (distribution's and GitLab's
// error="insufficient_scope" challenge), and what the token does grant,
// asked with one tag list read (pull); nil for any other refusal.
func missingPushScope(ctx context.Context, client *http.Client, repo name.Repository, auth authn.Authenticator, resp *http.Response, err error) error {
	if resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusForbidden {
		return nil
	}
	insufficient := false
	for _, c := range resp.Header.Values("WWW-Authenticate") {
		insufficient = insufficient || strings.Contains(c, `error="insufficient_scope"`)
	}
	if !insufficient {
		return nil
	}
	who := "anonymous access"
	if cfg, aerr := auth.Authorization(); aerr == nil && cfg.Username != "" {
		who = cfg.Username
	}
	grants := "neither pull nor push"
	u := url.URL{Scheme: repo.Registry.Scheme(), Host: repo.RegistryStr(), Path: "/v2/" + repo.RepositoryStr() + "/tags/list"}
	if req, rerr := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil); rerr == nil {
		if r, derr := client.Do(req); derr == nil {
			r.Body.Close()
			if r.StatusCode == http.StatusOK || r.StatusCode == http.StatusNotFound {
				grants = "only pull"
			}
		}
	}
	return &RegistryError{Host: repo.RegistryStr(), Kind: Unauthorized, Err: err, what: fmt.Sprintf(
		"registry %s: push to %s needs the push scope; the token for %s grants %s there: use credentials that may write to it (a GitLab CI job token pushes only to its own project, a deploy token needs write_registry)",
		repo.RegistryStr(), repo.RepositoryStr(), who, grants)}
}

// atRegistry explains err, naming the registry unless the explanation does.
func atRegistry(repo name.Repository, err error) error {
	err = Explain(err)
	var re *RegistryError
	if errors.As(err, &re) && re.Host != unknownHost {
		return err
	}
	return fmt.Errorf("registry %s: %w", repo.RegistryStr(), err)
}
