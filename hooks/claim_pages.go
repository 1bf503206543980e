package hooks

import (
	"errors"
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
	links    sites.Links // the addresses given out, built at serve time
	deploys  *sites.Service
	sessions *sessions
}

// claimPage is GET /claim/{slug}?token=: the site, its time left, and
// either the claim button (signed in) or the way to sign in and return.
func (c *claimPages) claimPage(e *core.RequestEvent) error {
	rec, err := sites.Claimable(e.App, e.Request.PathValue("slug"), e.Request.URL.Query().Get("token"))
	if err != nil {
		return c.claimError(e, err)
	}
	return render(e, http.StatusOK, ui.Claim(c.sessions.layout(e, c.sessions.user(e)), c.claimProps(e, rec, "")))
}

// claimSubmit is the claim button: POST /claim/{slug} with the token, for
// a signed-in user (its form read by pageForm).
func (c *claimPages) claimSubmit(e *core.RequestEvent) error {
	slug := e.Request.PathValue("slug")
	token := e.Request.PostForm.Get("token")
	user := c.sessions.user(e)
	if user == nil {
		return e.Redirect(http.StatusSeeOther, loginURL(c.claimPath(slug, token)))
	}
	rec, err := c.deploys.Claim(user, slug, token)
	switch {
	case errors.Is(err, sites.ErrNotFound), errors.Is(err, sites.ErrInvalidClaimToken):
		return c.claimError(e, err)
	case errors.Is(err, sites.ErrSlotLimit):
		rec, err := sites.Claimable(e.App, slug, token)
		if err != nil {
			return c.claimError(e, err)
		}
		return render(e, http.StatusForbidden, ui.Claim(c.sessions.layout(e, user), c.claimProps(e, rec, msgSlotLimit)))
	case err != nil:
		return err
	}
	d := sites.DeploymentOf(rec)
	return render(e, http.StatusOK, ui.ClaimDone(c.sessions.layout(e, user), ui.ClaimDoneProps{
		Slug: d.Slug(), Title: d.Title(), SiteURL: c.links.Site(d.Slug()),
	}))
}

// claimProps is the claim page of rec, with errMsg when a claim failed.
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
		SiteURL:   c.links.Site(slug),
		Token:     token,
		LoginURL:  loginURL(c.claimPath(slug, token)),
		ExpiresAt: exp,
		TimeLeft:  ui.TimeLeft(time.Until(exp)),
		Error:     errMsg,
	}
}

// claimPath is the claim page's path for slug and token.
func (c *claimPages) claimPath(slug, token string) string {
	return c.links.Claim(slug, token)[len(c.links.Web()):]
}

// claimError is the page for a claim link that does not work: a 400 for
// a token that does not match, else a 404.
func (c *claimPages) claimError(e *core.RequestEvent, err error) error {
	if errors.Is(err, sites.ErrInvalidClaimToken) {
		return c.sessions.errorPage(e, http.StatusBadRequest, "This claim link is not valid",
			"The link's token does not match this site. Copy the whole claim_url from the deploy answer.")
	}
	return c.sessions.errorPage(e, http.StatusNotFound, "This site cannot be claimed",
		"It does not exist, it has expired, or it was already claimed.")
}
