package pages

import (
	"net/http"

	"github.com/pocketbase/pocketbase/core"

	"sitedrop/sites/abuse"
	"sitedrop/ui"
)

// ReportForm is what the report page's form holds: the values of a post
// the server refused, with why (Error), or the URL to report from
// ?url=.
type ReportForm struct {
	URL, Reason, Details, Email string
	Error                       string
}

// reportPage is GET /report: the public form to report an abusive site
// (no account needed), ?url= prefilling the address; ?sent=1 is the
// thank-you its post (POST /report, hooks' report route) leads to.
func reportPage(sessions *Sessions) func(e *core.RequestEvent) error {
	return func(e *core.RequestEvent) error {
		q := e.Request.URL.Query()
		if q.Get("sent") != "" {
			return Render(e, http.StatusOK, ui.Report(sessions.Frame(e), ui.ReportProps{Sent: true}))
		}
		u := q.Get("url")
		if len(u) > abuse.MaxURL {
			u = ""
		}
		return RenderReport(e, sessions, http.StatusOK, ReportForm{URL: u})
	}
}

// RenderReport answers with the report page in status, its form holding
// f: the page itself, or a refused post shown again.
func RenderReport(e *core.RequestEvent, sessions *Sessions, status int, f ReportForm) error {
	p := ui.ReportProps{
		URL: f.URL, Reason: f.Reason, Details: f.Details, Email: f.Email, Error: f.Error,
		MaxURL: abuse.MaxURL, MaxDetails: abuse.MaxDetails,
	}
	for _, r := range abuse.Reasons {
		p.Reasons = append(p.Reasons, ui.ReportReason{Value: r, Label: abuse.ReasonLabels[r]})
	}
	return Render(e, status, ui.Report(sessions.Frame(e), p))
}
