package abuse

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/pocketbase/dbx"
	"github.com/pocketbase/ozzo-validation/v4/is"
	"github.com/pocketbase/pocketbase/core"

	"sitedrop/sites"
	"sitedrop/sites/domains"
)

// ErrUnknownSite refuses a report of a URL that no site here serves: not
// a slug host, a preview host of a site, a renamed site's old host or a
// verified custom domain.
var ErrUnknownSite = errors.New("This URL is not a site hosted here: report the address of a site (its own host, a preview or a custom domain)")

// ErrNotFound: no report of that id.
var ErrNotFound = errors.New("report not found")

// FieldError refuses a report's field: Msg says which and why (the
// answer's error).
type FieldError struct {
	Field string
	Msg   string
}

func (e *FieldError) Error() string { return e.Msg }

// Config is what Reports needs to know of the server.
type Config struct {
	// Hosts tell site hosts (slugs, previews) from the rest.
	Hosts sites.HostSplit
	// Domains are the custom domains' routes (nil: none are resolved).
	Domains *domains.Table
	// Mail sends a batch of new reports to the admins (MailDue); nil
	// mails nothing.
	Mail func(*Batch) error
	// MailInterval is the least time between two batch mails
	// (DefaultMailInterval when zero).
	MailInterval time.Duration
}

// DefaultMailInterval is the least time between two mails to the admins:
// the first report after a quiet spell is mailed at once (within the
// minute of the job), the ones that follow wait for the next batch.
const DefaultMailInterval = 15 * time.Minute

// Batch sizes.
const (
	// MailMaxListed is how many reports one mail lists (oldest first);
	// it counts the others.
	MailMaxListed = 50
	// mailMaxMarked bounds the reports one pass marks mailed; any more
	// go in the next batch.
	mailMaxMarked = 1000
)

// Reports is the abuse reports' service: filed by anyone (Open), worked
// by the admins (List, Dismiss, Action), mailed to them in batches
// (MailDue). Safe for concurrent use.
type Reports struct {
	app core.App
	cfg Config
}

// New is the reports of app.
func New(app core.App, cfg Config) *Reports {
	if cfg.MailInterval <= 0 {
		cfg.MailInterval = DefaultMailInterval
	}
	return &Reports{app: app, cfg: cfg}
}

// NewReport is a report as a reporter sends it.
type NewReport struct {
	URL     string
	Reason  string
	Details string
	Email   string
	// IP is the reporter's client address, as the server resolves it
	// behind --trusted-proxies.
	IP string
}

// Check refuses a report whose fields are out of bounds (*FieldError),
// trimming them first.
func (n *NewReport) Check() error {
	n.URL = strings.TrimSpace(n.URL)
	n.Reason = strings.TrimSpace(n.Reason)
	n.Details = strings.TrimSpace(n.Details)
	n.Email = strings.TrimSpace(n.Email)
	switch {
	case n.URL == "":
		return &FieldError{FieldURL, "url is required: the address of the site you report"}
	case len(n.URL) > MaxURL:
		return &FieldError{FieldURL, fmt.Sprintf("url is too long (at most %d bytes)", MaxURL)}
	case n.Reason == "":
		return &FieldError{FieldReason, "reason is required: one of " + strings.Join(Reasons, ", ")}
	case !slices.Contains(Reasons, n.Reason):
		return &FieldError{FieldReason, "reason must be one of " + strings.Join(Reasons, ", ")}
	case !utf8.ValidString(n.Details):
		return &FieldError{FieldDetails, "details must be UTF-8 text"}
	case utf8.RuneCountInString(n.Details) > MaxDetails:
		return &FieldError{FieldDetails, fmt.Sprintf("details are too long (at most %d characters)", MaxDetails)}
	case len(n.Email) > MaxEmail || (n.Email != "" && is.EmailFormat.Validate(n.Email) != nil):
		return &FieldError{FieldEmail, "email must be an e-mail address, or left out"}
	}
	return nil
}

// Open files a report: its fields checked (*FieldError), its URL
// resolved to the deployment it serves (ErrUnknownSite), and stored open.
// The same report sent again by the same client (same URL and reason)
// while the first is open is that first report, not a second one.
func (r *Reports) Open(n NewReport) (*Report, error) {
	if err := n.Check(); err != nil {
		return nil, err
	}
	host, dep, err := r.Resolve(n.URL)
	if err != nil {
		return nil, err
	}
	if same, err := r.app.FindFirstRecordByFilter(Collection,
		FieldDeployment+" = {:dep} && "+FieldIP+" = {:ip} && "+FieldURL+" = {:url} && "+FieldReason+" = {:reason} && "+FieldStatus+" = {:open}",
		dbx.Params{"dep": dep.Id, "ip": n.IP, "url": n.URL, "reason": n.Reason, "open": StatusOpen}); err == nil {
		return ReportOf(same), nil // sent again (a double click, a resent form): the same report
	}
	col, err := r.app.FindCachedCollectionByNameOrId(Collection)
	if err != nil {
		return nil, fmt.Errorf("reports collection: %w", err)
	}
	rep := ReportOf(core.NewRecord(col))
	rep.Set(FieldURL, n.URL)
	rep.Set(FieldReason, n.Reason)
	rep.Set(FieldDetails, n.Details)
	rep.Set(FieldEmail, n.Email)
	rep.Set(FieldStatus, StatusOpen)
	rep.Set(FieldDeployment, dep.Id)
	rep.Set(FieldSlug, dep.Slug())
	rep.Set(FieldHost, host)
	rep.Set(FieldIP, n.IP)
	if err := r.app.Save(rep); err != nil {
		return nil, fmt.Errorf("save report of %q: %w", host, err)
	}
	return rep, nil
}

// Resolve names the deployment a reported URL serves, and the URL's host:
// a site host (<slug>.<sites domain>), a preview host (v<N>--<slug>,
// <alias>--<slug>; the version or alias need not exist: the label names
// the site), a renamed site's old host while it redirects, or a verified
// custom domain (www.<apex> redirecting to its apex included). A URL
// without a scheme is read as https://. Anything else is ErrUnknownSite.
func (r *Reports) Resolve(raw string) (host string, dep *sites.Deployment, err error) {
	if host, err = r.host(raw); err != nil {
		return "", nil, err
	}
	slug, err := r.slugOf(host)
	if err != nil {
		return "", nil, err
	}
	if slug == "" {
		return "", nil, ErrUnknownSite
	}
	dep, err = sites.FindServedDeployment(r.app, slug, time.Now().UTC())
	if errors.Is(err, sites.ErrNotFound) {
		return "", nil, ErrUnknownSite
	}
	if err != nil {
		return "", nil, err
	}
	return host, dep, nil
}

// host is the normalised host of a reported URL (*FieldError when it is
// no web address); without a scheme, https:// is assumed.
func (r *Reports) host(raw string) (string, error) {
	raw = strings.TrimSpace(raw)
	if !strings.Contains(raw, "://") {
		raw = "https://" + raw
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", &FieldError{FieldURL, "url must be a web address (https://…)"}
	}
	return sites.NormHost(u.Host), nil
}

// slugOf is the slug a host serves ("" for none).
func (r *Reports) slugOf(host string) (string, error) {
	if label, isSite := r.cfg.Hosts.SiteLabel(host); isSite {
		if slug, _, _, _, ok := sites.ParsePreviewLabel(label); ok {
			return slug, nil
		}
		return label, nil
	}
	if r.cfg.Domains == nil {
		return "", nil
	}
	route, _, err := r.cfg.Domains.Lookup(host)
	if err != nil {
		return "", fmt.Errorf("custom domain %q: %w", host, err)
	}
	if route.Slug == "" && route.Apex != "" { // www.<apex>: the apex's site
		if route, _, err = r.cfg.Domains.Lookup(route.Apex); err != nil {
			return "", fmt.Errorf("custom domain %q: %w", route.Apex, err)
		}
	}
	return route.Slug, nil
}

// Find returns the report id (ErrNotFound when there is none).
func (r *Reports) Find(id string) (*Report, error) {
	rec, err := r.app.FindRecordById(Collection, id)
	if err != nil {
		return nil, fmt.Errorf("report %q: %w", id, errors.Join(ErrNotFound, err))
	}
	return ReportOf(rec), nil
}

// Dismiss closes the report id with nothing done, with the admin's note
// ("" keeps the note it has).
func (r *Reports) Dismiss(id, note string) (*Report, error) {
	return r.decide(id, StatusDismissed, note)
}

// Action closes the report id as acted on (a takedown, a block), with
// the admin's note ("" keeps the note it has).
func (r *Reports) Action(id, note string) (*Report, error) {
	return r.decide(id, StatusActioned, note)
}

// Reopen puts the report id back in the queue.
func (r *Reports) Reopen(id string) (*Report, error) {
	return r.decide(id, StatusOpen, "")
}

// decide sets the report's status, and its note when note is not "".
func (r *Reports) decide(id, status, note string) (*Report, error) {
	rep, err := r.Find(id)
	if err != nil {
		return nil, err
	}
	if note = strings.TrimSpace(note); utf8.RuneCountInString(note) > MaxNote {
		return nil, &FieldError{FieldNote, fmt.Sprintf("note is too long (at most %d characters)", MaxNote)}
	}
	rep.Set(FieldStatus, status)
	if note != "" {
		rep.Set(FieldNote, note)
	}
	if err := r.app.Save(rep); err != nil {
		return nil, fmt.Errorf("save report %q: %w", id, err)
	}
	return rep, nil
}

// Filter selects the reports List returns.
type Filter struct {
	// Status is one status ("" for all).
	Status string
	// DeploymentID keeps the reports of one deployment ("" for all).
	DeploymentID string
	// Limit is the most returned (100 when 0 or more than 500); Offset
	// skips that many first.
	Limit, Offset int
}

// List returns the reports f selects, newest first.
func (r *Reports) List(f Filter) ([]*Report, error) {
	if f.Limit <= 0 || f.Limit > 500 {
		f.Limit = 100
	}
	var conds []string
	params := dbx.Params{}
	if f.Status != "" {
		conds, params["status"] = append(conds, FieldStatus+" = {:status}"), f.Status
	}
	if f.DeploymentID != "" {
		conds, params["dep"] = append(conds, FieldDeployment+" = {:dep}"), f.DeploymentID
	}
	recs, err := r.app.FindRecordsByFilter(Collection, strings.Join(conds, " && "), "-"+FieldCreated+",-id", f.Limit, max(f.Offset, 0), params)
	if err != nil {
		return nil, fmt.Errorf("list reports: %w", err)
	}
	out := make([]*Report, len(recs))
	for i, rec := range recs {
		out[i] = ReportOf(rec)
	}
	return out, nil
}

// CountOpen is how many reports wait for a decision.
func (r *Reports) CountOpen() (int, error) {
	n, err := r.app.CountRecords(Collection, dbx.HashExp{FieldStatus: StatusOpen})
	if err != nil {
		return 0, fmt.Errorf("count open reports: %w", err)
	}
	return int(n), nil
}
