package publish

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
)

// explain adds the way out to registry errors users commonly hit.
func explain(err error) error {
	var terr *transport.Error
	if errors.As(err, &terr) {
		switch terr.StatusCode {
		case http.StatusUnauthorized, http.StatusForbidden:
			return fmt.Errorf("authentication failed (check CI_REGISTRY_USER/CI_REGISTRY_PASSWORD or the Docker config's credentials for this registry): %w", err)
		}
	}
	return err
}
