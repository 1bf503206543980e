package hooks

import (
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/pocketbase/pocketbase/apis"
	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tools/router"

	"sitedrop/hooks/internal/apierr"
	"sitedrop/hooks/pages"
	"sitedrop/sites"
	"sitedrop/sites/accounts"
	"sitedrop/sites/forms"
	"sitedrop/sites/intake"
	"sitedrop/sites/ratelimit"
	"sitedrop/ui"
)

// formPosts is the form endpoint of the sites: posts checked and stored,
// within a per-deployment limit, and the senders woken.
type formPosts struct {
	links sites.Links // the addresses given out, built at serve time
	// limit bounds the submissions per deployment.
	limit *ratelimit.Limiter
	// guards read the bodies (size, rate, memory).
	guards *intake.Guards
	// sessions give the thank-you page its frame.
	sessions *pages.Sessions
	// hosts tell site hosts from the web host (the thank-you page's link).
	hosts sites.HostSplit
	// wake tells the webhook and mail senders that there is new work.
	wake func()
}

// bindSubmitAPI registers the form endpoint of deployed sites and its
// thank-you page.
func bindSubmitAPI(r *router.Router[*core.RequestEvent], f *formPosts) {
	r.POST("/submit/{deployId}", f.submitCreate).Unbind(apis.DefaultBodyLimitMiddlewareId)
	r.OPTIONS("/submit/{deployId}", submitPreflight)
	r.GET("/submitted", f.submittedPage) // thank-you page of browser form posts
	r.Any("/submit/{deployId}", methodNotAllowed("POST, OPTIONS"))
}

// submitPreflight answers CORS preflights: any origin may post.
func submitPreflight(e *core.RequestEvent) error {
	h := e.Response.Header()
	h.Set("Access-Control-Allow-Origin", "*")
	h.Set("Access-Control-Allow-Methods", "POST, OPTIONS")
	h.Set("Access-Control-Allow-Headers", "Content-Type, Accept")
	h.Set("Access-Control-Max-Age", "86400")
	return e.NoContent(http.StatusNoContent)
}

// submitCreate is POST /submit/{deployId}: a deployed page's form data.
// JSON objects, url-encoded and multipart forms (fields only) up to 64 KiB.
// A browser form post (Accept: text/html) gets 303 to a thank-you page or
// to its _redirect field on the site itself.
func (f *formPosts) submitCreate(e *core.RequestEvent) error {
	e.Response.Header().Set("Access-Control-Allow-Origin", "*")
	dep, err := forms.FindAcceptingDeployment(e.App, e.Request.PathValue("deployId"))
	if errors.Is(err, sites.ErrTakenDown) {
		return apierr.Fail(http.StatusGone, msgSiteTakenDown)
	}
	if errors.Is(err, sites.ErrPaused) {
		return &apierr.Error{Status: http.StatusServiceUnavailable, Message: msgSitePaused, RetryAfter: pausedRetryAfter}
	}
	if errors.Is(err, sites.ErrAwaitingClaim) {
		return apierr.Fail(http.StatusForbidden, msgSiteAwaitingClaim)
	}
	if err != nil {
		return apierr.Fail(http.StatusNotFound, msgNotFound)
	}
	if err := f.limit.Check(dep.Id); err != nil {
		return err
	}
	post, err := f.readSubmission(e)
	if err != nil {
		return err
	}
	id := accounts.NewRecordID() // what a bot sees
	if post.Honeypot == "" {
		sub, err := forms.Submit(e.App, dep.Ref(f.links.Site(dep.Slug())), post.Data, post.Order)
		if err != nil {
			return err
		}
		f.wake()
		id = sub.Id
	}
	if wantsHTML(e.Request) {
		return e.Redirect(http.StatusSeeOther, f.afterSubmit(dep, post.Redirect))
	}
	return e.JSON(http.StatusOK, map[string]string{"message": "Submission received", "id": id})
}

// afterSubmit is where a browser goes after posting a form: its _redirect
// when that is a page of the same site (forms.SameSiteRedirect), else the
// thank-you page.
func (f *formPosts) afterSubmit(dep *forms.Deployment, redirect string) string {
	site := f.links.Site(dep.Slug())
	if u, ok := forms.SameSiteRedirect(site, redirect); ok {
		return u
	}
	return "/submitted?site=" + url.QueryEscape(site)
}

// submittedPage is the plain thank-you page of browser form posts.
func (f *formPosts) submittedPage(e *core.RequestEvent) error {
	back := e.Request.URL.Query().Get("site")
	if u, err := url.Parse(back); err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		back = ""
	} else if _, isSite := f.hosts.Site(u.Host); !isSite {
		back = ""
	}
	return pages.Render(e, http.StatusOK, ui.Submitted(f.sessions.Frame(e), ui.SubmittedProps{BackURL: back}))
}

// wantsHTML tells a browser form post from an API call.
func wantsHTML(r *http.Request) bool {
	return strings.Contains(r.Header.Get("Accept"), "text/html")
}

// readSubmission reads the post (forms.ParseSubmission) of at most
// forms.PostBodyLimit bytes. The body is read as deploy bodies are
// (intake.Guards.Body: the minimum rate after the grace, each byte held of
// the small bodies' pool as it comes, until it is decoded; see
// intake.Guards.BodyLease).
func (f *formPosts) readSubmission(e *core.RequestEvent) (*forms.Post, error) {
	lease := f.guards.BodyLease(e.Request.Context(), forms.PostBodyLimit)
	defer lease.End()
	body, err := f.guards.Body(e.Response, e.Request, forms.PostBodyLimit, lease)
	if err != nil {
		return nil, err
	}
	return forms.ParseSubmission(body, e.Request.Header.Get("Content-Type"))
}

// deploymentRef is a deployment as webhooks name it.
func deploymentRef(cfg *Config, rec *core.Record) forms.DeploymentRef {
	dep := forms.DeploymentOf(rec)
	return dep.Ref(cfg.links().Site(dep.Slug()))
}

// deploymentVersionRef is a deployment as its events name it: with the
// version ver (nil: none), and that version's preview URL when preview
// is set.
func deploymentVersionRef(cfg *Config, rec, ver *core.Record, preview bool) forms.DeploymentRef {
	r := deploymentRef(cfg, rec)
	if ver == nil {
		return r
	}
	r.Version = sites.VersionOf(ver).Number()
	if preview {
		r.PreviewURL = cfg.links().Preview(r.Slug, r.Version)
	}
	return r
}
