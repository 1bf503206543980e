package hooks

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"

	"github.com/pocketbase/pocketbase/apis"
	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tools/router"

	"sitedrop/sites"
	"sitedrop/sites/accounts"
	"sitedrop/sites/forms"
	"sitedrop/sites/intake"
	"sitedrop/sites/ratelimit"
	"sitedrop/ui"
)

// Limits of form submissions.
const (
	submitBodyLimit = 64 << 10 // bytes
	submitMaxFields = 100
	honeypotField   = "_hp"
	redirectField   = "_redirect"
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
	sessions *sessions
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
	if err != nil {
		return fail(http.StatusNotFound, msgNotFound)
	}
	if err := f.limit.Check(dep.Id); err != nil {
		return err
	}
	data, order, err := f.readSubmission(e)
	if err != nil {
		return err
	}
	redirect := stringField(data, redirectField)
	honeypot := stringField(data, honeypotField)
	for k := range data {
		if strings.HasPrefix(k, "_") {
			delete(data, k)
		}
	}
	id := accounts.NewRecordID() // what a bot sees
	if honeypot == "" {
		sub, err := forms.Submit(e.App, dep.Ref(f.links.Site(dep.Slug())), data, order)
		if err != nil {
			return err
		}
		f.wake()
		id = sub.Id
	}
	if wantsHTML(e.Request) {
		return e.Redirect(http.StatusSeeOther, f.afterSubmit(dep, redirect))
	}
	return e.JSON(http.StatusOK, map[string]string{"message": "Submission received", "id": id})
}

// afterSubmit is where a browser goes after posting a form: its _redirect
// when that is a page of the same site, else the thank-you page. A
// relative _redirect ("/thanks", "thanks.html") is a page of the site:
// the form posts to the web host, so the browser would resolve it there.
func (f *formPosts) afterSubmit(dep *forms.Deployment, redirect string) string {
	site := f.links.Site(dep.Slug())
	siteURL, _ := url.Parse(site)
	if u, err := url.Parse(redirect); err == nil && redirect != "" && siteURL != nil {
		if u.Scheme == "" { // "//host/x" keeps its host, which must be the site's
			u = siteURL.ResolveReference(u)
		}
		if (u.Scheme == "http" || u.Scheme == "https") && strings.EqualFold(u.Host, siteURL.Host) {
			u.User = nil // no credentials in a redirect
			return u.String()
		}
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
	return render(e, http.StatusOK, ui.Submitted(f.sessions.layout(e, f.sessions.user(e)), ui.SubmittedProps{BackURL: back}))
}

// wantsHTML tells a browser form post from an API call.
func wantsHTML(r *http.Request) bool {
	return strings.Contains(r.Header.Get("Accept"), "text/html")
}

// readSubmission decodes a JSON object, a url-encoded form or a multipart
// form (fields only) of at most submitBodyLimit bytes, and returns its
// field names in the order they came too. The body is read as deploy
// bodies are (intake.Guards.Body: the minimum rate after the grace, each byte held
// of the small bodies' pool as it comes, until it is decoded; see
// intake.Guards.BodyLease).
func (f *formPosts) readSubmission(e *core.RequestEvent) (map[string]any, []string, error) {
	lease := f.guards.BodyLease(e.Request.Context(), submitBodyLimit)
	defer lease.End()
	body, err := f.guards.Body(e.Response, e.Request, submitBodyLimit, lease)
	if err != nil {
		return nil, nil, err
	}
	mt, params, _ := mime.ParseMediaType(e.Request.Header.Get("Content-Type"))
	data := map[string]any{}
	var order []string
	switch mt {
	case "application/x-www-form-urlencoded":
		raw, err := io.ReadAll(body)
		if err != nil {
			return nil, nil, bodyError(err)
		}
		vals, err := url.ParseQuery(string(raw))
		if err != nil {
			return nil, nil, fail(http.StatusBadRequest, "Malformed form body")
		}
		for k, v := range vals {
			data[k] = formValue(v)
		}
		order = forms.FormKeyOrder(string(raw))
	case "multipart/form-data":
		mr := multipart.NewReader(body, params["boundary"])
		for {
			part, err := mr.NextPart()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return nil, nil, bodyError(err)
			}
			if part.FileName() != "" {
				return nil, nil, fail(http.StatusBadRequest, "File uploads are not accepted: send form fields only")
			}
			v, err := io.ReadAll(part)
			if err != nil {
				return nil, nil, bodyError(err)
			}
			name := part.FormName()
			order = append(order, name)
			if prev, ok := data[name]; ok {
				data[name] = appendValue(prev, string(v))
			} else {
				data[name] = string(v)
			}
		}
	default: // JSON, whatever the label says
		var seen bytes.Buffer
		dec := json.NewDecoder(io.TeeReader(body, &seen))
		dec.UseNumber()
		if err := dec.Decode(&data); err != nil {
			return nil, nil, intake.JSONError(err, submitBodyLimit)
		}
		if data == nil {
			return nil, nil, fail(http.StatusBadRequest, "Request body must be a JSON object")
		}
		if dec.More() {
			return nil, nil, fail(http.StatusBadRequest, "Malformed JSON: unexpected data after the JSON object")
		}
		order = forms.JSONKeyOrder(seen.Bytes())
	}
	if len(data) > submitMaxFields {
		return nil, nil, fail(http.StatusBadRequest, "Too many fields: at most %d", submitMaxFields)
	}
	return data, order, nil
}

// bodyError maps a body read error: the body reader's own (too slow,
// too large, the memory budget), 413 past the limit, else 400.
func bodyError(err error) error {
	var mbe *http.MaxBytesError
	switch {
	case intake.BodyRefusal(err):
		return err
	case errors.As(err, &mbe):
		return &intake.TooLargeError{Limit: submitBodyLimit}
	}
	return fail(http.StatusBadRequest, "Malformed form body")
}

// formValue keeps a single value as a string and several as a list.
func formValue(v []string) any {
	if len(v) == 1 {
		return v[0]
	}
	out := make([]any, len(v))
	for i, s := range v {
		out[i] = s
	}
	return out
}

func appendValue(prev any, v string) any {
	if list, ok := prev.([]any); ok {
		return append(list, v)
	}
	return []any{prev, v}
}

// stringField reads a control field (_hp, _redirect) as a string.
func stringField(data map[string]any, key string) string {
	s, _ := data[key].(string)
	return strings.TrimSpace(s)
}

// submissionJSON is a submission as the API and webhooks show it.
func submissionJSON(sub *core.Record) *forms.SubmissionJSON {
	return forms.SubmissionOf(sub).JSON()
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
	r.Version = ver.GetInt(sites.FieldVersionNumber)
	if preview {
		r.PreviewURL = cfg.links().Preview(r.Slug, r.Version)
	}
	return r
}
