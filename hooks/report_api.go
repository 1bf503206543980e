package hooks

import (
	"bytes"
	"context"
	"errors"
	"io"
	"mime"
	"net/http"
	"net/url"

	"github.com/pocketbase/pocketbase/apis"
	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tools/router"

	"sitedrop/hooks/internal/apierr"
	"sitedrop/hooks/pages"
	"sitedrop/hooks/server"
	"sitedrop/sites/abuse"
	"sitedrop/sites/intake"
	"sitedrop/sites/ratelimit"
	"sitedrop/sites/wire"
)

// Abuse reports' limits.
const (
	// reportsPerHour bounds the reports one client (its IPv4 address or
	// IPv6 /64) sends in an hour.
	reportsPerHour = 10
	// reportBodyLimit bounds a report's body: its longest fields,
	// percent-encoded, fit.
	reportBodyLimit = 32 << 10
)

// Messages of the report route.
const (
	msgReportReceived    = "Report received"
	msgReportCrossOrigin = "Reports are sent from this server's /report page or its API, not from another site's page"
	msgReportNotFound    = "Report not found"
)

// reportOrigin refuses a report a browser sends from a page of another
// origin: a page elsewhere could make its visitors file reports, each
// from their own address and so past the per-client limit.
var reportOrigin = http.NewCrossOriginProtection()

// reportDesk is POST /report: an abuse report by anyone, within a
// per-client limit, its body read within the guards.
type reportDesk struct {
	reports *abuse.Reports
	limit   *ratelimit.Limiter
	guards  *intake.Guards
	proxies server.TrustedProxies
	// sessions frame the report page a refused form post shows again.
	sessions *pages.Sessions
}

// bindReportAPI registers the report route (its page, GET /report, is
// hooks/pages').
func bindReportAPI(r *router.Router[*core.RequestEvent], d *reportDesk) {
	r.POST("/report", d.create).Unbind(apis.DefaultBodyLimitMiddlewareId)
}

// create is POST /report: JSON ({url, reason, details?, email?}) answered
// 201 with the report's id, or the report page's form, answered 303 to
// the page's thank-you (a refusal shows the form again, with its values
// and the error, in the status the API would answer). As everywhere in
// the API, the Content-Type is not what tells JSON: a body that starts
// as a JSON object is JSON (curl -d sends it as a form).
func (d *reportDesk) create(e *core.RequestEvent) error {
	mt, _, _ := mime.ParseMediaType(e.Request.Header.Get("Content-Type"))
	in, form, err := d.read(e, mt == "application/x-www-form-urlencoded")
	if err == nil {
		in.IP = d.proxies.ClientIP(e.Request)
		var rep *abuse.Report
		if rep, err = d.reports.Open(in); err == nil {
			if form {
				return e.Redirect(http.StatusSeeOther, "/report?sent=1")
			}
			return e.JSON(http.StatusCreated, wire.AbuseReportAnswer{Message: msgReportReceived, ID: rep.Id})
		}
	}
	ae, known := toAPIError(err)
	if !form || !known || ae.Status == http.StatusForbidden || ae.Status == statusClientClosed {
		return err
	}
	ae.SetRetryAfter(e.Response.Header())
	// a body read past its deadline cancels the request's context, which
	// would stop the page's rendering: the client still reads it
	e.Request = e.Request.WithContext(context.WithoutCancel(e.Request.Context()))
	return pages.RenderReport(e, d.sessions, ae.Status, pages.ReportForm{
		URL: in.URL, Reason: in.Reason, Details: in.Details, Email: in.Email, Error: ae.Message,
	})
}

// read checks where the report comes from and how often, then reads it:
// a form when formType (a form's Content-Type) and the body is not a JSON
// object, else JSON. form says which it was (formType until the body is
// read).
func (d *reportDesk) read(e *core.RequestEvent, formType bool) (in abuse.NewReport, form bool, err error) {
	if reportOrigin.Check(e.Request) != nil {
		return in, formType, apierr.Fail(http.StatusForbidden, msgReportCrossOrigin)
	}
	if err := d.limit.Check(d.proxies.RateKey(e.Request)); err != nil {
		d.guards.Discard(e.Response, e.Request, reportBodyLimit)
		return in, formType, err
	}
	lease := d.guards.BodyLease(e.Request.Context(), reportBodyLimit)
	defer lease.End()
	body, err := d.guards.Body(e.Response, e.Request, reportBodyLimit, lease)
	if err != nil {
		return in, formType, err
	}
	raw, err := io.ReadAll(body)
	if err != nil {
		return in, formType, err
	}
	if formType && !bytes.HasPrefix(bytes.TrimLeft(raw, " \t\r\n"), []byte("{")) {
		f, err := url.ParseQuery(string(raw))
		if err != nil {
			return in, true, &intake.InvalidError{Msg: "Malformed form body"}
		}
		return abuse.NewReport{URL: f.Get("url"), Reason: f.Get("reason"), Details: f.Get("details"), Email: f.Get("email")}, true, nil
	}
	var req wire.AbuseReportRequest
	if err := intake.DecodeJSON(bytes.NewReader(raw), reportBodyLimit, &req); err != nil {
		return in, false, err
	}
	return abuse.NewReport{URL: req.URL, Reason: req.Reason, Details: req.Details, Email: req.Email}, false, nil
}

// abuseAPIError maps the refusals of sites/abuse: a field out of bounds
// or a URL no site here serves (400), an unknown report (404).
func abuseAPIError(err error) (*apierr.Error, bool) {
	var fe *abuse.FieldError
	switch {
	case errors.As(err, &fe):
		return apierr.Fail(http.StatusBadRequest, "%s", fe.Msg), true
	case errors.Is(err, abuse.ErrUnknownSite):
		return apierr.Fail(http.StatusBadRequest, "%s", abuse.ErrUnknownSite.Error()), true
	case errors.Is(err, abuse.ErrNotFound):
		return apierr.Fail(http.StatusNotFound, msgReportNotFound), true
	}
	return nil, false
}
