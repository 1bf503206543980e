package sites_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"sitedrop/sites"
)

// TestProtectionLifecycle walks one deployment through protection
// changes, made at deploy (Create, Replace) and on their own
// (SetProtection): what LoadSite gives the gate after each, whether the
// share link stayed the same, and whether the cookie key changed (which
// signs every visitor out).
func TestProtectionLifecycle(t *testing.T) {
	hash := func(pw string) *string {
		h, err := sites.HashPassword(pw)
		if err != nil {
			t.Fatal(err)
		}
		return &h
	}
	empty, yes, no := "", true, false
	type step struct {
		name       string
		change     sites.ProtectionChange
		via        string // "replace" or "set"
		protected  bool
		password   string // accepted password, "" for none
		link       bool
		sameToken  bool // the share token is the previous one
		sameCookie bool // the cookie key is the previous one
	}
	steps := []step{
		{name: "share link on", change: sites.ProtectionChange{Link: &yes}, via: "set", protected: true, link: true},
		{name: "password added", change: sites.ProtectionChange{PasswordHash: hash("correct horse")}, via: "replace",
			protected: true, password: "correct horse", link: true, sameToken: true},
		{name: "content replaced, protection kept", via: "replace", protected: true, password: "correct horse",
			link: true, sameToken: true, sameCookie: true},
		{name: "nothing changed", via: "set", protected: true, password: "correct horse",
			link: true, sameToken: true, sameCookie: true},
		{name: "password changed", change: sites.ProtectionChange{PasswordHash: hash("battery staple")}, via: "set",
			protected: true, password: "battery staple", link: true, sameToken: true},
		{name: "rotated", change: sites.ProtectionChange{Rotate: true}, via: "set",
			protected: true, password: "battery staple", link: true},
		{name: "link off (the token is refused, not changed)", change: sites.ProtectionChange{Link: &no}, via: "replace",
			protected: true, password: "battery staple", sameToken: true},
		{name: "password removed", change: sites.ProtectionChange{PasswordHash: &empty}, via: "set"},
		{name: "link on again: a new secret", change: sites.ProtectionChange{Link: &yes}, via: "set", protected: true, link: true},
	}
	app, svc := newService(t)
	ctx := context.Background()
	c, err := svc.Create(ctx, sites.CreateParams{Owner: mustOwner(t, app), Slug: "guarded-site", Upload: files("index.html", "<p>hi")})
	if err != nil {
		t.Fatal(err)
	}
	site, _ := svc.LoadSite("guarded-site")
	if site.Protection != nil {
		t.Fatal("a new site is public")
	}
	var prevToken string
	var prevKey []byte
	for _, s := range steps {
		switch s.via {
		case "replace":
			_, err = svc.Replace(ctx, c.Record, sites.Metadata{Protect: s.change}, files("index.html", "<p>"+s.name))
		default:
			_, err = svc.SetProtection(context.Background(), c.Record, s.change)
		}
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		site, err := svc.LoadSite("guarded-site")
		if err != nil {
			t.Fatal(err)
		}
		p := site.Protection
		if (p != nil) != s.protected {
			t.Fatalf("%s: protected = %v", s.name, p != nil)
		}
		if p == nil {
			prevToken, prevKey = "", nil
			continue
		}
		if p.Link != s.link || p.CheckToken(p.ShareToken()) != s.link {
			t.Errorf("%s: link = %v, token accepted = %v", s.name, p.Link, p.CheckToken(p.ShareToken()))
		}
		if s.password != "" && (!p.CheckPassword(s.password) || p.CheckPassword(s.password+"x")) {
			t.Errorf("%s: the password check is wrong", s.name)
		}
		if s.password == "" && p.PasswordHash != "" {
			t.Errorf("%s: a password is set", s.name)
		}
		if prevToken != "" && (p.ShareToken() == prevToken) != s.sameToken {
			t.Errorf("%s: same share token = %v", s.name, !s.sameToken)
		}
		if prevKey != nil && bytes.Equal(p.CookieKey(), prevKey) != s.sameCookie {
			t.Errorf("%s: same cookie key = %v", s.name, !s.sameCookie)
		}
		if strings.Contains(p.ShareToken(), p.Secret) || len(p.Secret) < 40 {
			t.Errorf("%s: the secret %q shows in the token or is short", s.name, p.Secret)
		}
		prevToken, prevKey = p.ShareToken(), p.CookieKey()
	}
}

// TestCreateProtected: a site deployed with protection is protected from
// its first version on.
func TestCreateProtected(t *testing.T) {
	app, svc := newService(t)
	h, _ := sites.HashPassword("open sesame")
	for _, owner := range []bool{true, false} {
		p := sites.CreateParams{Upload: files("index.html", "<p>hi"), Meta: sites.Metadata{Protect: sites.ProtectionChange{PasswordHash: &h}}}
		if owner {
			p.Owner = mustOwner(t, app)
		}
		c, err := svc.Create(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		site, _ := svc.LoadSite(c.Record.GetString("slug"))
		if site.Protection == nil || !site.Protection.CheckPassword("open sesame") || site.Protection.Link {
			t.Errorf("owner %v: protection = %+v", owner, site.Protection)
		}
	}
}

// TestHashPassword: the limits, and passwords past bcrypt's 72 bytes
// still count in full.
func TestHashPassword(t *testing.T) {
	long := strings.Repeat("é", sites.MaxPasswordLen)
	cases := []struct {
		name, pw string
		err      error
	}{
		{"too short", "1234567", sites.ErrPasswordLength},
		{"shortest", "12345678", nil},
		{"longest, multibyte", long, nil},
		{"too long", long + "a", sites.ErrPasswordLength},
		{"not UTF-8", "abcdefgh\xff", sites.ErrPasswordUTF8},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h, err := sites.HashPassword(c.pw)
			if !errors.Is(err, c.err) {
				t.Fatalf("err = %v, want %v", err, c.err)
			}
			if err != nil {
				return
			}
			p := &sites.Protection{PasswordHash: h, Secret: "s"}
			if !p.CheckPassword(c.pw) {
				t.Error("the password is refused")
			}
			// differs only past the 72nd byte
			if p.CheckPassword(c.pw[:len(c.pw)-1] + "!") {
				t.Error("another password is accepted")
			}
		})
	}
}
