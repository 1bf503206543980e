package hooks

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/pocketbase/pocketbase/core"

	"sitedrop/sites"
	"sitedrop/ui"
)

// formBodyLimit bounds the bodies of the pages' forms.
const formBodyLimit = 16 << 10

// claimPages are the claim link's page and its button.
type claimPages struct {
	cfg      *Config
	deploys  *sites.Service
	kit      *pageKit
	sessions *sessions
}

// claimPage is GET /claim/{slug}?token=: the site, its time left, and
// either the claim button (signed in) or the way to sign in and return.
func (c *claimPages) claimPage(e *core.RequestEvent) error {
	rec, status, err := c.claimable(e.App, e.Request.PathValue("slug"), e.Request.URL.Query().Get("token"))
	if err != nil {
		return c.claimError(e, status)
	}
	return render(e, http.StatusOK, ui.Claim(c.sessions.layout(e, c.sessions.user(e)), c.claimProps(e, rec, "")))
}

// claimSubmit is the claim button: POST /claim/{slug} with the token, for
// a signed-in user.
func (c *claimPages) claimSubmit(e *core.RequestEvent) error {
	if ok, err := c.kit.readForm(e); !ok {
		return err
	}
	slug := e.Request.PathValue("slug")
	token := e.Request.PostForm.Get("token")
	user := c.sessions.user(e)
	if user == nil {
		return e.Redirect(http.StatusSeeOther, loginURL(c.claimPath(slug, token)))
	}
	rec, err := c.deploys.Claim(user, slug, token)
	switch {
	case errors.Is(err, sites.ErrNotFound):
		return c.claimError(e, http.StatusNotFound)
	case errors.Is(err, sites.ErrInvalidClaimToken):
		return c.claimError(e, http.StatusBadRequest)
	case errors.Is(err, sites.ErrSlotLimit):
		rec, status, cerr := c.claimable(e.App, slug, token)
		if cerr != nil {
			return c.claimError(e, status)
		}
		return render(e, http.StatusForbidden, ui.Claim(c.sessions.layout(e, user), c.claimProps(e, rec, msgSlotLimit)))
	case err != nil:
		return err
	}
	return render(e, http.StatusOK, ui.ClaimDone(c.sessions.layout(e, user), ui.ClaimDoneProps{
		Slug: sites.DeploymentOf(rec).Slug(), Title: sites.DeploymentOf(rec).Title(), SiteURL: c.cfg.links().Site(sites.DeploymentOf(rec).Slug()),
	}))
}

// claimable returns the claimable deployment slug (see sites.Claimable),
// or the status to answer: 404 gone, 400 bad link.
func (c *claimPages) claimable(app core.App, slug, token string) (*core.Record, int, error) {
	rec, err := sites.Claimable(app, slug, token)
	switch {
	case errors.Is(err, sites.ErrInvalidClaimToken):
		return nil, http.StatusBadRequest, err
	case err != nil:
		return nil, http.StatusNotFound, err
	}
	return rec, http.StatusOK, nil
}

func (c *claimPages) claimProps(e *core.RequestEvent, rec *core.Record, errMsg string) ui.ClaimProps {
	dep := sites.DeploymentOf(rec)
	slug := dep.Slug()
	exp := dep.ExpiresAt()
	token := e.Request.URL.Query().Get("token")
	if token == "" {
		token = e.Request.PostForm.Get("token")
	}
	return ui.ClaimProps{
		Slug:      slug,
		Title:     dep.Title(),
		SiteURL:   c.cfg.links().Site(slug),
		Token:     token,
		LoginURL:  loginURL(c.claimPath(slug, token)),
		ExpiresAt: exp,
		TimeLeft:  timeLeft(time.Until(exp)),
		Error:     errMsg,
	}
}

// claimPath is the claim page's path for slug and token.
func (c *claimPages) claimPath(slug, token string) string {
	return c.cfg.links().Claim(slug, token)[len(c.cfg.links().Web()):]
}

// claimError is the page for a claim link that does not work.
func (c *claimPages) claimError(e *core.RequestEvent, status int) error {
	if status == http.StatusBadRequest {
		return c.sessions.errorPage(e, status, "This claim link is not valid",
			"The link's token does not match this site. Copy the whole claim_url from the deploy answer.")
	}
	return c.sessions.errorPage(e, http.StatusNotFound, "This site cannot be claimed",
		"It does not exist, it has expired, or it was already claimed.")
}

// timeLeft says a duration the way people do: "23 hours", "5 minutes".
func timeLeft(d time.Duration) string {
	switch {
	case d <= time.Minute:
		return "less than a minute"
	case d < time.Hour:
		return plural(int(d/time.Minute), "minute")
	case d < 48*time.Hour:
		return plural(int(d/time.Hour), "hour")
	}
	return plural(int(d/(24*time.Hour)), "day")
}

func plural(n int, unit string) string {
	if n == 1 {
		return "1 " + unit
	}
	return fmt.Sprintf("%d %ss", n, unit)
}
