package pages

import (
	"errors"
	"net/http"
	"time"

	"github.com/pocketbase/pocketbase/core"

	"sitedrop/hooks/internal/apierr"
	"sitedrop/sites"
	"sitedrop/ui"
)

// formBodyLimit bounds the bodies of the pages' forms.
const formBodyLimit = 16 << 10

// claimPages are the claim link's page and its button. Claiming is
// POST → 303 → GET like every form: the button answers 303 to the claimed
// site's page (a flash says it is claimed), and the claim link, opened
// again by the account that claimed it (a reload, Back, the link from the
// deploy answer), says the site is theirs instead of "cannot be claimed".
type claimPages struct {
	links    sites.Links // the addresses given out, built at serve time
	deploys  *sites.Service
	sessions *Sessions
	// answer is the API's answer to an error (Answers.Any).
	answer func(error) (*apierr.Error, bool)
}

// claimPage is GET /claim/{slug}?token=: the site, its time left, and
// either the claim button (signed in) or the way to sign in and return.
// To the account that owns the site already it says so, with a link to
// the site's page.
func (c *claimPages) claimPage(e *core.RequestEvent) error {
	slug := e.Request.PathValue("slug")
	user := c.sessions.user(e)
	if d := ownSite(e.App, user, slug); d != nil {
		return Render(e, http.StatusOK, ui.ClaimDone(c.sessions.layout(e, user), c.doneProps(d)))
	}
	rec, err := sites.Claimable(e.App, slug, e.Request.URL.Query().Get("token"))
	if err != nil {
		return c.claimError(e, err)
	}
	return Render(e, http.StatusOK, ui.Claim(c.sessions.layout(e, user), c.claimProps(e, rec)))
}

// claimSubmit is the claim button: POST /claim/{slug} with the token, for
// a signed-in user (its form read by pageForm). A claim answers 303 to the
// site's page; posting again for a site this user already owns does the
// same, so a second post (a double click, a resent form) changes nothing
// and still lands on the site. A full plan is a flash and 303 back to the
// claim link. Signed out, it is 303 to sign in, coming back to the link.
func (c *claimPages) claimSubmit(e *core.RequestEvent) error {
	slug := e.Request.PathValue("slug")
	token := e.Request.PostForm.Get("token")
	user := c.sessions.user(e)
	if user == nil {
		return e.Redirect(http.StatusSeeOther, loginURL(c.claimPath(slug, token)))
	}
	rec, err := c.deploys.Claim(e.Request.Context(), user, slug, token)
	switch {
	case errors.Is(err, sites.ErrNotFound):
		if d := ownSite(e.App, user, slug); d != nil {
			return e.Redirect(http.StatusSeeOther, claimedSitePath(d.Id))
		}
		return c.claimError(e, err)
	case errors.Is(err, sites.ErrInvalidClaimToken):
		return c.claimError(e, err)
	case errors.Is(err, sites.ErrSlotLimit):
		ae, _ := c.answer(err) // the API's words for a full plan
		return c.sessions.back(e, c.claimPath(slug, token), ui.FlashError, ae.Message)
	case err != nil:
		return err
	}
	d := sites.DeploymentOf(rec)
	name := d.Title()
	if name == "" {
		name = d.Slug()
	}
	return c.sessions.back(e, claimedSitePath(d.Id), ui.FlashSuccess, "Claimed: "+name+" is now yours and no longer expires.")
}

// ownSite is the deployment slug when user owns it, else nil.
func ownSite(app core.App, user *core.Record, slug string) *sites.Deployment {
	if user == nil {
		return nil
	}
	d, err := sites.FindDeploymentBySlug(app, slug)
	if err != nil || d.OwnerID() != user.Id {
		return nil
	}
	return d
}

// claimedSitePath is the owner's page of the site id, where a claim
// lands.
func claimedSitePath(id string) string {
	return "/account/sites/" + id
}

// doneProps is the "this site is yours" page of d.
func (c *claimPages) doneProps(d *sites.Deployment) ui.ClaimDoneProps {
	return ui.ClaimDoneProps{
		Slug: d.Slug(), Title: d.Title(), SiteURL: c.links.Site(d.Slug()), SitePage: claimedSitePath(d.Id),
	}
}

// claimProps is the claim page of rec.
func (c *claimPages) claimProps(e *core.RequestEvent, rec *core.Record) ui.ClaimProps {
	dep := sites.DeploymentOf(rec)
	slug := dep.Slug()
	exp := dep.ExpiresAt()
	token := e.Request.URL.Query().Get("token")
	return ui.ClaimProps{
		Slug:          slug,
		Title:         dep.Title(),
		SiteURL:       c.links.Site(slug),
		Token:         token,
		LoginURL:      loginURL(c.claimPath(slug, token)),
		ExpiresAt:     exp,
		TimeLeft:      ui.TimeLeft(time.Until(exp)),
		AwaitingClaim: dep.AwaitingClaim(),
	}
}

// claimPath is the claim page's path for slug and token.
func (c *claimPages) claimPath(slug, token string) string {
	return c.links.Claim(slug, token)[len(c.links.Web()):]
}

// claimError is the page for a claim link that does not work: a 400 for
// a token that does not match, else a 404. Signed out, the 404 offers to
// sign in and come back: whoever claimed the site then reads that it is
// theirs.
func (c *claimPages) claimError(e *core.RequestEvent, err error) error {
	if errors.Is(err, sites.ErrInvalidClaimToken) {
		return c.sessions.errorPage(e, http.StatusBadRequest, "This claim link is not valid",
			"The link's token does not match this site. Copy the whole claim_url from the deploy answer.")
	}
	const title, msg = "This site cannot be claimed", "It does not exist, it has expired, or it was already claimed."
	user := c.sessions.user(e)
	if user != nil {
		return c.sessions.errorPage(e, http.StatusNotFound, title, msg)
	}
	slug := e.Request.PathValue("slug")
	back := c.claimPath(slug, e.Request.URL.Query().Get("token"))
	return Render(e, http.StatusNotFound, ui.ErrorPage(c.sessions.layout(e, nil), ui.ErrorProps{
		Status: http.StatusNotFound, Title: title, Message: msg + " If you claimed it, sign in to see it.",
		LinkURL: loginURL(back), LinkText: "Sign in",
	}))
}
