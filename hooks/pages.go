package hooks

import (
	"io/fs"
	"net/http"

	"github.com/pocketbase/pocketbase/apis"
	"github.com/pocketbase/pocketbase/core"

	"sitedrop/ui"
)

// bindPages registers the web pages of the web host.
func bindPages(sd *sitedrop, se *core.ServeEvent) {
	assets, _ := fs.Sub(ui.Assets, "assets")
	se.Router.GET("/static/{path...}", apis.Static(assets, false)) // embedded CSS
	se.Router.GET("/{$}", sd.homePage)                             // landing page
}

// homePage is GET /: what this server is, with a curl example.
func (sd *sitedrop) homePage(e *core.RequestEvent) error {
	html, err := ui.RenderString(e.Request.Context(), ui.Home(ui.HomeProps{
		WebURL:         sd.webURL(),
		SiteURLExample: sd.siteURL("your-site"),
	}))
	if err != nil {
		return err
	}
	return e.HTML(http.StatusOK, html)
}
