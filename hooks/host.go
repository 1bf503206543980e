package hooks

import (
	"net/http"

	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tools/hook"

	"sitedrop/hooks/server"
)

// siteHostPriority is the front door's router priority (see
// server.FrontPriority): before every PocketBase middleware.
const siteHostPriority = server.FrontPriority

// front builds the front door (see server.Front) from finished services:
// call it in OnServe, once the listen address is learned
// (learnListenPort), so its web host names are complete.
func (sd *sitedrop) front() *server.Front {
	return &server.Front{
		Hosts:        sd.hosts,
		Sites:        sd.server,
		CustomDomain: sd.customHost,
		ListenHost:   sd.cfg.listenHost,
		PublicHost:   server.PublicHostOf(sd.cfg.PublicURL),
		Logger:       sd.app.Logger(),
	}
}

// bindWWWRedirect sends www.<web host> (on any port) to the web URL with
// 308, path and query kept. PocketBase's own www redirect only matches the
// bare host, so it misses every server on a port other than 80 or 443.
func bindWWWRedirect(sd *sitedrop, se *core.ServeEvent) {
	se.Router.Bind(&hook.Handler[*core.RequestEvent]{
		Id:       "sitedropWWWRedirect",
		Priority: siteHostPriority,
		Func: func(e *core.RequestEvent) error {
			if !sd.hosts.IsWWWWebHost(e.Request.Host) {
				return e.Next()
			}
			return e.Redirect(http.StatusPermanentRedirect, sd.cfg.links().Web()+e.Request.URL.RequestURI())
		},
	})
}

// siteSlug tells whether host is a site host and which slug it names. The
// web host and www.<web host> are never site hosts, nor is a malformed host.
func (sd *sitedrop) siteSlug(host string) (string, bool) {
	return sd.hosts.Site(host)
}

// serveSite answers a site-host request (see server.ServeSite): custom
// domains serve their site through it too.
func (sd *sitedrop) serveSite(w http.ResponseWriter, r *http.Request, slug string) {
	server.ServeSite(sd.server, sd.app.Logger(), w, r, slug)
}
