package hooks

import (
	"net/http"
	"strings"

	"github.com/pocketbase/pocketbase/core"

	"sitedrop/sites"
)

// bearerToken returns the token of an "Authorization: Bearer <token>"
// header and whether the header was sent at all.
func bearerToken(r *http.Request) (token string, sent bool) {
	h := r.Header.Get("Authorization")
	if h == "" {
		return "", false
	}
	scheme, tok, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", true
	}
	return strings.TrimSpace(tok), true
}

// requireUser returns the user of the request's API key, or a 401.
func (sd *sitedrop) requireUser(e *core.RequestEvent) (*core.Record, error) {
	tok, sent := bearerToken(e.Request)
	if !sent || tok == "" {
		return nil, fail(http.StatusUnauthorized, msgUnauthorized)
	}
	user, err := sites.UserByAPIKey(e.App, tok)
	if err != nil {
		return nil, fail(http.StatusUnauthorized, msgUnauthorized)
	}
	return user, nil
}

// optionalUser returns the key's user, nil when no Authorization header was
// sent, and a 401 when one was sent but is not a valid key.
func (sd *sitedrop) optionalUser(e *core.RequestEvent) (*core.Record, error) {
	if _, sent := bearerToken(e.Request); !sent {
		return nil, nil
	}
	return sd.requireUser(e)
}
