package hooks

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"

	"github.com/pocketbase/pocketbase/core"

	"sitedrop/sites"
	"sitedrop/sites/serve"
)

// Messages of the protection fields.
const (
	msgPasswordType = "password must be a string, or null to remove it"
	msgProtectValue = `protect must be true, false, null or "rotate"`
)

// passwordHeader carries an archive deploy's password (a query would
// leave it in logs); sent empty, it removes the password.
const passwordHeader = "X-Sitedrop-Password"

// passwordField is the deploy body's password: absent (keep), null
// (remove) or a string (set).
type passwordField struct {
	set, remove bool
	value       string
}

// UnmarshalJSON reads a string or null.
func (f *passwordField) UnmarshalJSON(b []byte) error {
	f.set = true
	if string(b) == "null" {
		f.remove = true
		return nil
	}
	if err := json.Unmarshal(b, &f.value); err != nil {
		return fail(http.StatusBadRequest, msgPasswordType)
	}
	return nil
}

// protectField is the deploy body's protect: absent (keep), true (share
// link on), false or null (off), "rotate" (on, with a new link).
type protectField struct {
	set, on, rotate bool
}

// UnmarshalJSON reads true, false, null or "rotate".
func (f *protectField) UnmarshalJSON(b []byte) error {
	f.set = true
	switch string(bytes.TrimSpace(b)) {
	case "true":
		f.on = true
	case "false", "null":
	case `"rotate"`:
		f.on, f.rotate = true, true
	default:
		return fail(http.StatusBadRequest, msgProtectValue)
	}
	return nil
}

// parseProtect reads an archive deploy's protect query parameter: true,
// false (or null), or rotate.
func parseProtect(v string) (protectField, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true":
		return protectField{set: true, on: true}, nil
	case "false", "null":
		return protectField{set: true}, nil
	case "rotate":
		return protectField{set: true, on: true, rotate: true}, nil
	}
	return protectField{}, fail(http.StatusBadRequest, msgProtectValue)
}

// archiveProtection reads an archive deploy's protection: the protect
// query parameter and the password header.
func archiveProtection(r *http.Request, req *deployRequest) error {
	q := r.URL.Query()
	if q.Has("protect") {
		f, err := parseProtect(q.Get("protect"))
		if err != nil {
			return err
		}
		req.Protect = f
	}
	if v, ok := r.Header[passwordHeader]; ok {
		req.Password = passwordField{set: true, remove: len(v) == 0 || v[0] == "", value: strings.Join(v, "")}
	}
	return nil
}

// checkProtection validates the protection fields without hashing.
func (r *deployRequest) checkProtection() error {
	if r.Password.set && !r.Password.remove {
		if err := sites.ValidatePassword(r.Password.value); err != nil {
			return fail(http.StatusBadRequest, "%s", err.Error())
		}
	}
	return nil
}

// protection turns the protection fields into the service's change,
// hashing a new password (slow on purpose: after the cheap checks).
func (r *deployRequest) protection() (sites.ProtectionChange, error) {
	var c sites.ProtectionChange
	switch {
	case r.Password.remove:
		empty := ""
		c.PasswordHash = &empty
	case r.Password.set:
		h, err := sites.HashPassword(r.Password.value)
		if err != nil {
			return c, fail(http.StatusBadRequest, "%s", err.Error())
		}
		c.PasswordHash = &h
	}
	if r.Protect.set {
		on := r.Protect.on
		c.Link = &on
		c.Rotate = r.Protect.rotate
	}
	return c, nil
}

// siteOverTLS reports whether a site request came over TLS: sitedrop's
// own listener, or a proxy in front of it when the public URL is https.
// The gate's cookie is then Secure and __Host-.
func (c *Config) siteOverTLS(r *http.Request) bool {
	return r.TLS != nil || strings.HasPrefix(c.PublicURL, "https:")
}

// shareURL is the share link of a deployment whose link is on, "" for
// any other: the site's URL with the share token.
func (c *Config) shareURL(rec *core.Record) string {
	p := sites.ProtectionOf(rec)
	if p == nil || !p.Link {
		return ""
	}
	return c.siteURL(sites.DeploymentOf(rec).Slug()) + "?" + serve.TokenParam + "=" + url.QueryEscape(p.ShareToken())
}
