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

// claimPage is GET /claim/{slug}?token=: the site, its time left, and
// either the claim button (signed in) or the way to sign in and return.
func (sd *sitedrop) claimPage(e *core.RequestEvent) error {
	rec, status, err := sd.claimable(e.Request.PathValue("slug"), e.Request.URL.Query().Get("token"))
	if err != nil {
		return sd.claimError(e, status)
	}
	return render(e, http.StatusOK, ui.Claim(sd.sessions.layout(e, sd.sessions.user(e)), sd.claimProps(e, rec, "")))
}

// claimSubmit is the claim button: POST /claim/{slug} with the token, for
// a signed-in user.
func (sd *sitedrop) claimSubmit(e *core.RequestEvent) error {
	if ok, err := sd.kit.readForm(e); !ok {
		return err
	}
	slug := e.Request.PathValue("slug")
	token := e.Request.PostForm.Get("token")
	user := sd.sessions.user(e)
	if user == nil {
		return e.Redirect(http.StatusSeeOther, loginURL(sd.claimPath(slug, token)))
	}
	rec, err := sd.svc.Claim(user, slug, token)
	switch {
	case errors.Is(err, sites.ErrNotFound):
		return sd.claimError(e, http.StatusNotFound)
	case errors.Is(err, sites.ErrInvalidClaimToken):
		return sd.claimError(e, http.StatusBadRequest)
	case errors.Is(err, sites.ErrSlotLimit):
		rec, status, cerr := sd.claimable(slug, token)
		if cerr != nil {
			return sd.claimError(e, status)
		}
		return render(e, http.StatusForbidden, ui.Claim(sd.sessions.layout(e, user), sd.claimProps(e, rec, msgSlotLimit)))
	case err != nil:
		return err
	}
	return render(e, http.StatusOK, ui.ClaimDone(sd.sessions.layout(e, user), ui.ClaimDoneProps{
		Slug: sites.DeploymentOf(rec).Slug(), Title: sites.DeploymentOf(rec).Title(), SiteURL: sd.cfg.siteURL(sites.DeploymentOf(rec).Slug()),
	}))
}

// claimable returns the claimable deployment slug (see sites.Claimable),
// or the status to answer: 404 gone, 400 bad link.
func (sd *sitedrop) claimable(slug, token string) (*core.Record, int, error) {
	rec, err := sites.Claimable(sd.app, slug, token)
	switch {
	case errors.Is(err, sites.ErrInvalidClaimToken):
		return nil, http.StatusBadRequest, err
	case err != nil:
		return nil, http.StatusNotFound, err
	}
	return rec, http.StatusOK, nil
}

func (sd *sitedrop) claimProps(e *core.RequestEvent, rec *core.Record, errMsg string) ui.ClaimProps {
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
		SiteURL:   sd.cfg.siteURL(slug),
		Token:     token,
		LoginURL:  loginURL(sd.claimPath(slug, token)),
		ExpiresAt: exp,
		TimeLeft:  timeLeft(time.Until(exp)),
		Error:     errMsg,
	}
}

// claimPath is the claim page's path for slug and token.
func (sd *sitedrop) claimPath(slug, token string) string {
	return sd.cfg.claimURL(slug, token)[len(sd.cfg.webURL()):]
}

// claimError is the page for a claim link that does not work.
func (sd *sitedrop) claimError(e *core.RequestEvent, status int) error {
	if status == http.StatusBadRequest {
		return sd.sessions.errorPage(e, status, "This claim link is not valid",
			"The link's token does not match this site. Copy the whole claim_url from the deploy answer.")
	}
	return sd.sessions.errorPage(e, http.StatusNotFound, "This site cannot be claimed",
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
