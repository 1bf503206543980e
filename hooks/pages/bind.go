// Package pages is the web host's browser pages: the landing page, the
// claim link, sign-in, the account and each site's tabs, and the answer
// to every other path. Each handler builds the props of a ui component
// from the services hooks builds once and hands it (Services), the
// same services the API uses, and renders it; every form is POST → 303 →
// GET. It never imports hooks: Bind is all hooks calls.
package pages

import (
	"io/fs"
	"time"

	"github.com/pocketbase/pocketbase/apis"
	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tools/router"

	"sitedrop/hooks/internal/apierr"
	"sitedrop/sites"
	"sitedrop/sites/domains"
	"sitedrop/sites/forms"
	"sitedrop/sites/intake"
	"sitedrop/sites/ratelimit"
	"sitedrop/sites/usage"
	"sitedrop/ui"
)

// Services are what the pages are built on: the services hooks builds
// once (hooks.go's build) and shares with the API, so that a page and its
// API route meet the same rules and limits.
type Services struct {
	// Sessions are the browser sessions: who is signed in, the messages
	// a form post leaves for the next page.
	Sessions *Sessions
	// Guards read the forms' bodies as deploy bodies are read.
	Guards *intake.Guards
	// Deploys are the sites.
	Deploys *sites.Service
	// Domains list, count, add, check and remove custom domains.
	Domains *domains.Service
	// DomainStart begins an action of owner on its custom domains within
	// the per-account limit the API shares (its refusal the 429, its
	// Retry-After set on e's response); nil allowance when dns is false.
	DomainStart func(e *core.RequestEvent, owner string, dns bool) (*domains.Allowance, error)
	// SiteHost is a site's own host name.
	SiteHost func(slug string) string
	// Links are the addresses given out, built at serve time.
	Links sites.Links
	// Limits are the server's limits the drop zones announce.
	Limits Limits
	// Gate limits and holds the deploys a settings change makes, and the
	// site controls' per-account rate, as the API's.
	Gate *intake.Gate
	// WebhookSends limits the tests and redeliveries an account queues by
	// hand.
	WebhookSends *ratelimit.Limiter
	// WebhookGuard is the SSRF guard of webhook URLs, as the
	// configuration has it now.
	WebhookGuard func() forms.WebhookGuard
	// DeploymentRef is what a webhook delivery says of its deployment.
	DeploymentRef func(dep *core.Record) forms.DeploymentRef
	// Wake nudges the webhook sender.
	Wake func()
	// Usage is what an account uses (the account page's Usage panel).
	Usage *usage.Service
	// Analytics are a site's visits of the 30 days to now.
	Analytics func(app core.App, dep string, now time.Time) (ui.SiteAnalytics, error)
	// SubmissionsCSV streams a site's submissions as the API's download.
	SubmissionsCSV func(e *core.RequestEvent, dep *core.Record) error
	// LLMs is GET /llms.txt: how an agent publishes here.
	LLMs func(e *core.RequestEvent) error
	// SignIn is the sign-in endpoints' work the sign-in page shares.
	SignIn SignIn
	// Answers are the API's answers to errors.
	Answers Answers
	// Moderation is what the superusers' moderation page (/admin) is
	// built on; without its Sessions the page is not bound.
	Moderation Moderation
}

// Limits are the server's limits a page's drop zone announces (see
// dropProps).
type Limits struct {
	MaxFiles int   // files in one deployment
	MaxBody  int64 // bytes of a deploy request's body
	// Anon is the anonymous deploys' rules in force (sites.InstanceSettings.Anon),
	// read at each page: an administrator changes them at run time.
	Anon      func() sites.AnonPolicy
	FreeSlots int // sites of the free plan
	ProSlots  int // sites of the pro plan
}

// Answers are the API's answers to errors (hooks/errors.go's mapping),
// so that a page refuses what the API refuses, in the API's words.
type Answers struct {
	// Any is the answer to any error; known is false for an error that
	// is not the client's (a 500).
	Any func(err error) (ae *apierr.Error, known bool)
	// Domain is the answer to a limit of the routes or a refusal of
	// sites/domains; false for any other error.
	Domain func(err error) (*apierr.Error, bool)
}

// Bind registers the web pages of the web host on r: the landing page,
// the claim link, the sign-in page, the account's pages and each site's,
// and the answer to every other path. The account's pages are behind a
// signed-in user, their forms once read (pageForm). The admin dashboard's
// missing pages are AdminNotFound's, a middleware the caller binds.
func Bind(r *router.Router[*core.RequestEvent], s Services) {
	auth := &pageAuth{sessions: s.Sessions, guards: s.Guards, deploys: s.Deploys, answer: s.Answers.Any}
	home := &homePage{limits: s.Limits, links: s.Links, sessions: s.Sessions}
	claims := &claimPages{links: s.Links, deploys: s.Deploys, sessions: s.Sessions, answer: s.Answers.Any}
	account := &accountPages{limits: s.Limits, links: s.Links, deploys: s.Deploys, domains: s.Domains, sessions: s.Sessions, usage: s.Usage}
	login := &loginPages{signIn: s.SignIn, sessions: s.Sessions, answer: s.Answers.Any, auth: auth}

	assets, _ := fs.Sub(ui.Assets, "assets")
	r.GET("/static/{path...}", apis.Static(assets, false))                // embedded CSS and scripts
	r.GET("/{$}", home.serve)                                             // landing page
	r.GET("/llms.txt", s.LLMs)                                            // how an agent publishes here
	r.GET("/claim/{slug}", claims.claimPage)                              // claim link of an anonymous deploy
	r.POST("/claim/{slug}", claims.claimSubmit).Bind(auth.pageForm())     // its "claim" button
	r.GET("/auth/login", login.loginPage)                                 // sign-in page: e-mail, then code
	r.POST("/auth/login", login.loginEmailForm).Bind(auth.pageForm())     // its e-mail form without JavaScript
	r.POST("/auth/login/code", login.loginCodeForm).Bind(auth.pageForm()) // its code form without JavaScript
	r.POST("/auth/logout", login.logoutForm)                              // sign-out button of the pages
	r.GET("/report", reportPage(s.Sessions))                              // report an abusive site (its post: hooks' report route)
	r.GET("/account", account.accountPage).Bind(auth.requirePageUser("")) // the user's sites and keys
	r.GET("/account/keys/{id}/revoke", account.accountKeyRevokeConfirm).  // asks first
										Bind(auth.requirePageUser("/account"))
	r.GET("/account/activity", account.accountActivity). // the audit log of the account's things
								Bind(auth.requirePageUser(""))
	r.GET("/account/delete", account.accountDeletePage). // what goes, and the confirmation
								Bind(auth.requirePageUser("/account"))
	forms := r.Group("/account").Bind(auth.pageForm(), auth.requirePageUser("/account"))
	forms.POST("/keys", account.accountKeyCreate) // new API key, shown once
	forms.POST("/keys/{id}/revoke", account.accountKeyRevoke)
	forms.POST("/delete", account.accountDelete) // the account and everything in it
	forms.POST("/sessions/{id}/revoke", account.sessionRevoke)
	forms.POST("/sessions/revoke-others", account.sessionRevokeOthers) // sign out everywhere else
	bindAccountSitePages(r, auth, s)
	bindAdminPages(r, auth, s)     // the superusers' moderation page
	bindWebNotFound(r, s.Sessions) // every other path
}
