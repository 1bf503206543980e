package pages

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tools/hook"

	"sitedrop/hooks/internal/apierr"
	"sitedrop/hooks/internal/routectx"
	"sitedrop/sites"
	"sitedrop/sites/intake"
)

// crossOrigin guards the pages' cookie-authenticated forms: a browser
// request from another origin (a site host included) is refused.
var crossOrigin = http.NewCrossOriginProtection()

// wantsHTML tells a browser from an API client.
func wantsHTML(r *http.Request) bool {
	return strings.Contains(r.Header.Get("Accept"), "text/html")
}

// pageAuth guards the web pages at the route, as hooks' apiAuth guards
// the API: a form post's origin and body (pageForm), the browser
// session's user (requirePageUser) and the user's site of the path
// (requirePageOwner).
// What it finds is left on the event (read with userOf and ownedOf); what
// it refuses is answered as a page: a redirect to sign in, an error page.
type pageAuth struct {
	sessions *Sessions
	// guards read the form bodies as deploy bodies are read.
	guards *intake.Guards
	// deploys finds the user's deployments (requirePageOwner).
	deploys *sites.Service
	// answer is the API's answer to an error (hooks' toAPIError): a
	// refused body's status and message.
	answer func(error) (*apierr.Error, bool)
}

// pageForm checks a page's form post before anything else: same origin
// (else a 403 page), a readable small form (in PostForm), read as deploy
// bodies are (intake.Guards.Body: the minimum rate after the grace, each byte held
// of the small bodies' pool as it comes, until it is parsed; see
// intake.Guards.BodyLease); a refused body gets an error page with the API's status.
func (p *pageAuth) pageForm() *hook.Handler[*core.RequestEvent] {
	return middleware("sitedropPageForm", func(e *core.RequestEvent) error {
		if err := p.readForm(e); err != nil {
			return p.formRefused(e, err)
		}
		return e.Next()
	})
}

// readForm reads e's small form body into PostForm, within the guards.
func (p *pageAuth) readForm(e *core.RequestEvent) error {
	if crossOrigin.Check(e.Request) != nil {
		return errCrossOrigin
	}
	lease := p.guards.BodyLease(e.Request.Context(), formBodyLimit)
	defer lease.End()
	body, err := p.guards.Body(e.Response, e.Request, formBodyLimit, lease)
	if err != nil {
		return err
	}
	e.Request.Body = readCloser{body, e.Request.Body}
	if err := e.Request.ParseForm(); err != nil {
		return fmt.Errorf("%w: %w", errFormUnreadable, err)
	}
	return nil
}

// The refusals of readForm that are no *apierr.Error.
var (
	errCrossOrigin    = errors.New("form sent from another origin")
	errFormUnreadable = errors.New("unreadable form")
)

// formRefused is the error page of a form post readForm refused.
func (p *pageAuth) formRefused(e *core.RequestEvent, err error) error {
	var ae *apierr.Error
	if intake.BodyRefusal(err) {
		ae, _ = p.answer(err)
	}
	switch {
	case errors.Is(err, errCrossOrigin):
		return p.sessions.errorPage(e, http.StatusForbidden, "Request refused", "This form can only be sent from this server's own pages.")
	case ae != nil: // too large, too slow, the memory budget
		// A read past its deadline cancels the request's context, which
		// would stop the page's rendering: the client still reads it.
		e.Request = e.Request.WithContext(context.WithoutCancel(e.Request.Context()))
		ae.SetRetryAfter(e.Response.Header())
		return p.sessions.errorPage(e, ae.Status, http.StatusText(ae.Status), ae.Message)
	}
	return p.sessions.errorPage(e, http.StatusBadRequest, "Bad request", "The form could not be read.")
}

// readCloser is a body read through another reader (a guarded body) and
// closed as it was.
type readCloser struct {
	io.Reader
	io.Closer
}

// requirePageUser lets a signed-in browser through, its user on the event,
// and sends anyone else to sign in, coming back to next ("" for the page
// itself; a form post comes back to a page, never to itself).
func (p *pageAuth) requirePageUser(next string) *hook.Handler[*core.RequestEvent] {
	return middleware("sitedropRequirePageUser", func(e *core.RequestEvent) error {
		user := p.sessions.user(e)
		if user == nil {
			back := next
			if back == "" {
				back = e.Request.URL.Path
			}
			return e.Redirect(http.StatusSeeOther, loginURL(back))
		}
		routectx.SetUser(e, user)
		return e.Next()
	})
}

// requirePageOwner, after requirePageUser, leaves the user's deployment
// named by the path value param on the event, and answers a 404 page for
// anyone else's (or none).
func (p *pageAuth) requirePageOwner(param string) *hook.Handler[*core.RequestEvent] {
	return middleware("sitedropRequirePageOwner", func(e *core.RequestEvent) error {
		dep, err := p.deploys.FindOwned(userOf(e), e.Request.PathValue(param))
		if err != nil {
			return p.sessions.errorPage(e, http.StatusNotFound, "Site not found", "There is no such site on your account.")
		}
		routectx.SetDeployment(e, dep)
		return e.Next()
	})
}

// The request event's caller and deployment, and the middleware shape:
// routectx's, shared with the other side (API or pages).
var (
	middleware = routectx.Middleware
	userOf     = routectx.User
	ownedOf    = routectx.Deployment
	timestamp  = routectx.Timestamp
)
