package sign

import (
	"errors"
	"fmt"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// tokenClaims are the claims of an OIDC token read before Fulcio checks
// its signature: only to fail early with a clear message.
type tokenClaims struct {
	jwt.Claims
	Email string `json:"email"`
}

// parseToken reads tok's claims without checking its signature (Fulcio does).
func parseToken(tok string) (tokenClaims, error) {
	var c tokenClaims
	parsed, err := jwt.ParseSigned(tok, []jose.SignatureAlgorithm{jose.RS256, jose.RS384, jose.RS512, jose.ES256, jose.ES384, jose.ES512, jose.PS256, jose.EdDSA})
	if err != nil {
		return c, fmt.Errorf("OIDC token is not a JWT: %w", err)
	}
	if err := parsed.UnsafeClaimsWithoutVerification(&c); err != nil {
		return c, fmt.Errorf("OIDC token claims: %w", err)
	}
	if c.Issuer == "" || c.Subject == "" {
		return c, errors.New("OIDC token has no issuer or subject")
	}
	return c, nil
}

// usableAt fails when the token has expired or is not valid yet at now.
func (c tokenClaims) usableAt(now time.Time) error {
	if c.Expiry != nil && !now.Before(c.Expiry.Time()) {
		return fmt.Errorf("OIDC token from %s expired at %s (now %s): use a fresh token (a job's id_tokens last as long as the job)",
			c.Issuer, c.Expiry.Time().UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339))
	}
	if c.NotBefore != nil && now.Add(time.Minute).Before(c.NotBefore.Time()) {
		return fmt.Errorf("OIDC token from %s is not valid before %s", c.Issuer, c.NotBefore.Time().UTC().Format(time.RFC3339))
	}
	return nil
}

// identity is the token's email, else its subject.
func (c tokenClaims) identity() string {
	if c.Email != "" {
		return c.Email
	}
	return c.Subject
}
