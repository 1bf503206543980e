package intake

import (
	"net/http"
	"strings"

	"sitedrop/sites"
	"sitedrop/sites/wire"
)

// PasswordHeader carries an archive deploy's password (a query would
// leave it in logs); sent empty, it removes the password.
const PasswordHeader = "X-Sitedrop-Password"

// parseProtect reads an archive deploy's protect query parameter: true,
// false (or null), or rotate.
func parseProtect(v string) (wire.Protect, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true":
		return wire.Protect{Set: true, On: true}, nil
	case "false", "null":
		return wire.Protect{Set: true}, nil
	case "rotate":
		return wire.Protect{Set: true, On: true, Rotate: true}, nil
	}
	return wire.Protect{}, invalid("%s", wire.ErrProtectValue)
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
		req.Password = wire.Password{Set: true, Remove: len(v) == 0 || v[0] == "", Value: strings.Join(v, "")}
	}
	return nil
}

// checkPassword validates a password that is set, without hashing it.
func checkPassword(p wire.Password) error {
	if p.Set && !p.Remove {
		if err := sites.ValidatePassword(p.Value); err != nil {
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
	case r.Password.Remove:
		empty := ""
		c.PasswordHash = &empty
	case r.Password.Set:
		h, err := sites.HashPassword(r.Password.Value)
		if err != nil {
			return c, invalid("%s", err.Error())
		}
		c.PasswordHash = &h
	}
	if r.Protect.Set {
		on := r.Protect.On
		c.Link = &on
		c.Rotate = r.Protect.Rotate
	}
	return c, nil
}
