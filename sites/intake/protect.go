package intake

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"

	"sitedrop/sites"
)

// Messages of the protection fields.
const (
	MsgPasswordType = "password must be a string, or null to remove it"
	MsgProtectValue = `protect must be true, false, null or "rotate"`
)

// PasswordHeader carries an archive deploy's password (a query would
// leave it in logs); sent empty, it removes the password.
const PasswordHeader = "X-Sitedrop-Password"

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
		return invalid(MsgPasswordType)
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
		return invalid(MsgProtectValue)
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
	return protectField{}, invalid(MsgProtectValue)
}

// archiveProtection reads an archive deploy's protection: the protect
// query parameter and the password header.
func archiveProtection(r *http.Request, req *Request) error {
	q := r.URL.Query()
	if q.Has("protect") {
		f, err := parseProtect(q.Get("protect"))
		if err != nil {
			return err
		}
		req.Protect = f
	}
	if v, ok := r.Header[PasswordHeader]; ok {
		req.Password = passwordField{set: true, remove: len(v) == 0 || v[0] == "", value: strings.Join(v, "")}
	}
	return nil
}

// checkProtection validates the protection fields without hashing.
func (r *Request) checkProtection() error {
	if r.Password.set && !r.Password.remove {
		if err := sites.ValidatePassword(r.Password.value); err != nil {
			return invalid("%s", err.Error())
		}
	}
	return nil
}

// Protection turns the protection fields into the service's change,
// hashing a new password (slow on purpose: after the cheap checks).
func (r *Request) Protection() (sites.ProtectionChange, error) {
	var c sites.ProtectionChange
	switch {
	case r.Password.remove:
		empty := ""
		c.PasswordHash = &empty
	case r.Password.set:
		h, err := sites.HashPassword(r.Password.value)
		if err != nil {
			return c, invalid("%s", err.Error())
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
