package forms

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"

	"sitedrop/sites/intake"
)

// The limits and control fields of a form post.
const (
	// PostBodyLimit bounds a post's body, in bytes.
	PostBodyLimit = 64 << 10
	// PostMaxFields bounds a post's fields, its control fields included.
	PostMaxFields = 100
	// HoneypotField is the field a form hides from people: a post that
	// fills it is a bot's, answered as any other and stored nowhere.
	HoneypotField = "_hp"
	// RedirectField names the page of the site a browser goes to after
	// posting (see SameSiteRedirect).
	RedirectField = "_redirect"
)

// Post is a visitor's form post as read by ParseSubmission.
type Post struct {
	// Data are the fields without the control fields (those starting with
	// "_"): a single value as a string, several as a list (JSON posts keep
	// their values' types).
	Data map[string]any
	// Order is the field names in the order they came (see OrderedJSON).
	Order []string
	// Redirect is the RedirectField, trimmed ("" without one).
	Redirect string
	// Honeypot is the HoneypotField, trimmed: not "" for a bot.
	Honeypot string
}

// ParseSubmission reads a form post of the media type contentType (a
// Content-Type header) from body: a url-encoded form, a multipart form
// (fields only), or else a JSON object, whatever the label says. body is
// read to its end at most; the caller bounds it to PostBodyLimit
// (intake.Guards.Body).
//
// Its refusals are intake's: an *intake.InvalidError saying what is
// malformed (a file upload, more than PostMaxFields fields, JSON that is
// not one object), an *intake.TooLargeError past PostBodyLimit, and the
// body reader's own refusals as they are.
func ParseSubmission(body io.Reader, contentType string) (*Post, error) {
	mt, params, _ := mime.ParseMediaType(contentType)
	data := map[string]any{}
	var order []string
	switch mt {
	case "application/x-www-form-urlencoded":
		raw, err := io.ReadAll(body)
		if err != nil {
			return nil, bodyError(err)
		}
		vals, err := url.ParseQuery(string(raw))
		if err != nil {
			return nil, malformedForm
		}
		for k, v := range vals {
			data[k] = formValue(v)
		}
		order = FormKeyOrder(string(raw))
	case "multipart/form-data":
		mr := multipart.NewReader(body, params["boundary"])
		for {
			part, err := mr.NextPart()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return nil, bodyError(err)
			}
			if part.FileName() != "" {
				return nil, &intake.InvalidError{Msg: "File uploads are not accepted: send form fields only"}
			}
			v, err := io.ReadAll(part)
			if err != nil {
				return nil, bodyError(err)
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
			return nil, intake.JSONError(err, PostBodyLimit)
		}
		if data == nil {
			return nil, &intake.InvalidError{Msg: "Request body must be a JSON object"}
		}
		if dec.More() {
			return nil, &intake.InvalidError{Msg: "Malformed JSON: unexpected data after the JSON object"}
		}
		order = JSONKeyOrder(seen.Bytes())
	}
	if len(data) > PostMaxFields {
		return nil, &intake.InvalidError{Msg: fmt.Sprintf("Too many fields: at most %d", PostMaxFields)}
	}
	p := &Post{Data: data, Order: order, Redirect: stringField(data, RedirectField), Honeypot: stringField(data, HoneypotField)}
	for k := range data {
		if strings.HasPrefix(k, "_") {
			delete(data, k)
		}
	}
	return p, nil
}

// malformedForm refuses a form body that cannot be parsed.
var malformedForm = &intake.InvalidError{Msg: "Malformed form body"}

// bodyError maps a body read error: the body reader's own (too slow,
// too large, the memory budget) as it is, *intake.TooLargeError past the
// limit, else a malformed form.
func bodyError(err error) error {
	var mbe *http.MaxBytesError
	switch {
	case intake.BodyRefusal(err):
		return err
	case errors.As(err, &mbe):
		return &intake.TooLargeError{Limit: PostBodyLimit}
	}
	return malformedForm
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

// appendValue adds v to a multipart field's value(s) prev.
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

// SameSiteRedirect is where a browser goes after posting a form of the
// site at the URL site: its redirect (RedirectField) when that is a page
// of the same site, without credentials; false otherwise. A relative
// redirect ("/thanks", "thanks.html") is a page of the site: the form
// posts to the web host, so the browser would resolve it there.
func SameSiteRedirect(site, redirect string) (string, bool) {
	siteURL, _ := url.Parse(site)
	u, err := url.Parse(redirect)
	if err != nil || redirect == "" || siteURL == nil {
		return "", false
	}
	if u.Scheme == "" { // "//host/x" keeps its host, which must be the site's
		u = siteURL.ResolveReference(u)
	}
	if (u.Scheme == "http" || u.Scheme == "https") && strings.EqualFold(u.Host, siteURL.Host) {
		u.User = nil // no credentials in a redirect
		return u.String(), true
	}
	return "", false
}
