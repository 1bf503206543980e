package accounts

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/pocketbase/dbx"
	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tools/security"
	"github.com/pocketbase/pocketbase/tools/types"
)

// AdminSessionsCollection holds the moderation page's superuser sessions.
const AdminSessionsCollection = "admin_sessions"

// fieldSuperuser is the admin session's superuser.
const fieldSuperuser = "superuser"

// AdminSessionTTL is how long a superuser's session of the moderation
// page lasts: short, as it can take sites down and ban accounts.
const AdminSessionTTL = 2 * time.Hour

// ErrAdminCredentials refuses a moderation sign-in: no superuser has the
// address, or the password is wrong (the two read the same).
var ErrAdminCredentials = errors.New("wrong e-mail address or password")

// AdminSessions signs PocketBase superusers in to the moderation page
// (/admin on the web host) with their e-mail and password, and keeps
// them in a cookie of its own, apart from the users' sessions
// (Sessions): a random token whose hash is stored with the superuser and
// an expiry of AdminSessionTTL; SameSite=Strict, HttpOnly, host-only,
// __Host- and Secure under TLS. It keeps the page's one-shot messages
// for each session too.
//
//	s := accounts.NewAdminSessions(app, func() bool { return behindTLS })
//	su, err := s.SignIn(email, password) // ErrAdminCredentials
//	err = s.Start(w, r, su)
//	su = s.Superuser(r) // nil when not signed in
type AdminSessions struct {
	app    core.App
	secure func() bool
	// flashes are the page's one-shot messages (POST → redirect → GET).
	flashes Flashes
}

// NewAdminSessions is the moderation page's session service of app;
// secure reports, at each request, whether the web host is reached over
// TLS.
func NewAdminSessions(app core.App, secure func() bool) *AdminSessions {
	return &AdminSessions{app: app, secure: secure}
}

// CookieName is the moderation session cookie's name (the __Host- prefix
// under TLS).
func (s *AdminSessions) CookieName() string {
	if s.secure() {
		return "__Host-sitedrop_admin"
	}
	return "sitedrop_admin"
}

// SignIn checks a superuser's e-mail and password (PocketBase's
// superusers collection, ValidatePassword) and returns the superuser, or
// ErrAdminCredentials. An unknown address costs the same bcrypt work as a
// known one.
func (s *AdminSessions) SignIn(email, password string) (*core.Record, error) {
	su, err := s.app.FindAuthRecordByEmail(core.CollectionNameSuperusers, email)
	if err != nil || email == "" {
		DummyLoginCodeWork()
		return nil, ErrAdminCredentials
	}
	if password == "" || !su.ValidatePassword(password) {
		return nil, ErrAdminCredentials
	}
	return su, nil
}

// Start signs r's browser in as the superuser su: it ends the browser's
// previous session, stores a new one and sets its cookie on w. (The
// expired ones go with the minute's upkeep: PurgeExpiredAdminSessions.)
func (s *AdminSessions) Start(w http.ResponseWriter, r *http.Request, su *core.Record) error {
	if err := s.end(r); err != nil {
		return err
	}
	col, err := s.app.FindCachedCollectionByNameOrId(AdminSessionsCollection)
	if err != nil {
		return fmt.Errorf("find %s: %w", AdminSessionsCollection, err)
	}
	token := security.RandomString(48)
	rec := core.NewRecord(col)
	rec.Set(fieldSuperuser, su.Id)
	rec.Set(FieldTokenHash, HashSecret(token))
	rec.Set(FieldExpiresAt, time.Now().UTC().Add(AdminSessionTTL))
	if err := s.app.Save(rec); err != nil {
		return fmt.Errorf("save admin session: %w", err)
	}
	s.setCookie(w, token, int(AdminSessionTTL/time.Second))
	return nil
}

// PurgeExpiredAdminSessions deletes the moderation page's sessions past
// their expiry (the sites' upkeep runs it every minute).
func PurgeExpiredAdminSessions(app core.App, now time.Time) error {
	_, err := app.NonconcurrentDB().Delete(AdminSessionsCollection,
		dbx.NewExp(FieldExpiresAt+" <= {:now}", dbx.Params{"now": now.UTC().Format(types.DefaultDateLayout)})).Execute()
	if err != nil {
		return fmt.Errorf("purge admin sessions: %w", err)
	}
	return nil
}

// Superuser is the superuser r's browser is signed in as, nil when none
// (no cookie, an unknown or expired session, a deleted superuser).
func (s *AdminSessions) Superuser(r *http.Request) *core.Record {
	tok := s.token(r)
	if tok == "" || len(tok) > 128 {
		return nil
	}
	rec, err := s.app.FindFirstRecordByData(AdminSessionsCollection, FieldTokenHash, HashSecret(tok))
	if err != nil || !rec.GetDateTime(FieldExpiresAt).Time().After(time.Now()) {
		return nil
	}
	su, err := s.app.FindRecordById(core.CollectionNameSuperusers, rec.GetString(fieldSuperuser))
	if err != nil {
		return nil
	}
	return su
}

// End signs r's browser out of the moderation page.
func (s *AdminSessions) End(w http.ResponseWriter, r *http.Request) error {
	if err := s.end(r); err != nil {
		return err
	}
	s.setCookie(w, "", -1)
	return nil
}

// end deletes the session of r's cookie, if any.
func (s *AdminSessions) end(r *http.Request) error {
	tok := s.token(r)
	if tok == "" {
		return nil
	}
	if _, err := s.app.NonconcurrentDB().Delete(AdminSessionsCollection, dbx.HashExp{FieldTokenHash: HashSecret(tok)}).Execute(); err != nil {
		return fmt.Errorf("end admin session: %w", err)
	}
	s.flashes.Take(HashSecret(tok), time.Now())
	return nil
}

// Flash queues f for the next page r's browser loads (nothing without a
// session).
func (s *AdminSessions) Flash(r *http.Request, f Flash) {
	if tok := s.token(r); tok != "" {
		s.flashes.Add(HashSecret(tok), f, time.Now())
	}
}

// TakeFlashes returns and forgets the messages queued for r's browser.
func (s *AdminSessions) TakeFlashes(r *http.Request) []Flash {
	tok := s.token(r)
	if tok == "" {
		return nil
	}
	return s.flashes.Take(HashSecret(tok), time.Now())
}

// token is r's moderation cookie, "" without one.
func (s *AdminSessions) token(r *http.Request) string {
	c, err := r.Cookie(s.CookieName())
	if err != nil {
		return ""
	}
	return c.Value
}

// setCookie hands the browser the token (maxAge < 0 drops it).
func (s *AdminSessions) setCookie(w http.ResponseWriter, token string, maxAge int) {
	http.SetCookie(w, &http.Cookie{
		Name: s.CookieName(), Value: token, Path: "/", MaxAge: maxAge,
		HttpOnly: true, Secure: s.secure(), SameSite: http.SameSiteStrictMode,
	})
}
