package sites

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/pocketbase/pocketbase/core"
	"golang.org/x/crypto/bcrypt"
)

// Password limits of a protected site, in characters.
const (
	MinPasswordLen = 8
	MaxPasswordLen = 128
)

// Errors of protection changes; their messages are the clients'.
var (
	ErrPasswordLength = fmt.Errorf("password must be %d to %d characters", MinPasswordLen, MaxPasswordLen)
	ErrPasswordUTF8   = errors.New("password must be valid UTF-8")
)

// Protection is how a protected site lets visitors in: with its password
// (PasswordHash), with its share link (Link), or either. Everything the
// site server's gate needs is here, so a replica that reads sites.Site as
// JSON needs no database and no server-wide secret. A nil *Protection is
// a public site.
type Protection struct {
	// PasswordHash is the bcrypt hash of the password (see HashPassword);
	// empty when the site has no password.
	PasswordHash string `json:"password_hash,omitempty"`
	// Link tells that the share link (ShareToken) lets visitors in.
	Link bool `json:"link,omitempty"`
	// Secret is the per-site random secret (base64url) from which the
	// share token and the cookie key derive. It never leaves the server:
	// rotating it changes the share link and signs every visitor out.
	Secret string `json:"secret"`
}

// ShareToken is the value of the share link's _token: derived from the
// secret, so the owner can copy the same link again later.
func (p *Protection) ShareToken() string {
	return base64.RawURLEncoding.EncodeToString(p.derive("sitedrop share token v1"))
}

// CookieKey is the HMAC key of the gate's cookies. It covers the secret,
// the password's hash and whether the link is on, so any change of the
// protection (a new password, its removal, a rotation, the link turned
// off) signs every visitor out.
func (p *Protection) CookieKey() []byte {
	link := "0"
	if p.Link {
		link = "1"
	}
	return p.derive("sitedrop gate cookie v1\x00" + p.PasswordHash + "\x00" + link)
}

// CheckToken reports, in constant time, whether token is the share
// token of a site whose link is on.
func (p *Protection) CheckToken(token string) bool {
	want := p.ShareToken()
	return hmac.Equal([]byte(token), []byte(want)) && p.Link && p.Secret != ""
}

// CheckPassword reports whether password is the site's (bcrypt compares
// in constant time). It is slow on purpose: callers rate limit it.
func (p *Protection) CheckPassword(password string) bool {
	if p.PasswordHash == "" || len(password) > 4*MaxPasswordLen {
		return false
	}
	return bcrypt.CompareHashAndPassword([]byte(p.PasswordHash), prehash(password)) == nil
}

// derive is HMAC-SHA256(secret, label).
func (p *Protection) derive(label string) []byte {
	m := hmac.New(sha256.New, []byte(p.Secret))
	m.Write([]byte(label))
	return m.Sum(nil)
}

// ValidatePassword checks a password's length (MinPasswordLen to
// MaxPasswordLen characters of valid UTF-8).
func ValidatePassword(password string) error {
	if !utf8.ValidString(password) {
		return ErrPasswordUTF8
	}
	if n := utf8.RuneCountInString(password); n < MinPasswordLen || n > MaxPasswordLen {
		return ErrPasswordLength
	}
	return nil
}

// HashPassword validates password and returns its slow hash: bcrypt (cost
// 10) of its SHA-256, base64-encoded, since bcrypt reads only 72 bytes
// and a password may have 128 characters of up to 4 bytes.
func HashPassword(password string) (string, error) {
	if err := ValidatePassword(password); err != nil {
		return "", err
	}
	h, err := bcrypt.GenerateFromPassword(prehash(password), bcrypt.DefaultCost)
	if err != nil {
		return "", fmt.Errorf("hash password: %w", err)
	}
	return string(h), nil
}

// prehash is what bcrypt sees of a password (see HashPassword).
func prehash(password string) []byte {
	sum := sha256.Sum256([]byte(password))
	return []byte(base64.StdEncoding.EncodeToString(sum[:]))
}

// newSecret returns a fresh per-site secret.
func newSecret() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return base64.RawURLEncoding.EncodeToString(b)
}

// ProtectionChange changes a deployment's protection; nil fields keep what
// is there.
type ProtectionChange struct {
	// PasswordHash sets the password (a HashPassword result), or removes
	// it (""); nil keeps it.
	PasswordHash *string
	// Link turns the share link on or off; nil keeps it.
	Link *bool
	// Rotate turns the share link on with a new token (and signs every
	// visitor out).
	Rotate bool
}

// IsZero reports whether c changes nothing.
func (c ProtectionChange) IsZero() bool {
	return c.PasswordHash == nil && c.Link == nil && !c.Rotate
}

// Deployment record fields of the protection.
const (
	FieldProtectPasswordHash = "protect_password_hash"
	FieldProtectLink         = "protect_link"
	FieldProtectSecret       = "protect_secret"
)

// apply writes c on rec. The secret is created with the first
// protection, replaced on Rotate, and dropped with the last protection,
// so a share link never comes back to life after the protection is
// removed and set again.
func (c ProtectionChange) apply(rec *core.Record) {
	if c.PasswordHash != nil {
		rec.Set(FieldProtectPasswordHash, *c.PasswordHash)
	}
	if c.Link != nil {
		rec.Set(FieldProtectLink, *c.Link)
	}
	if c.Rotate {
		rec.Set(FieldProtectLink, true)
		rec.Set(FieldProtectSecret, newSecret())
	}
	switch {
	case rec.GetString(FieldProtectPasswordHash) == "" && !rec.GetBool(FieldProtectLink):
		rec.Set(FieldProtectSecret, "")
	case rec.GetString(FieldProtectSecret) == "":
		rec.Set(FieldProtectSecret, newSecret())
	}
}

// NormalizeProtection makes a deployment record written elsewhere (the
// admin dashboard) a whole protection, as every change through
// SetProtection is: a password typed into protect_password_hash is
// hashed (it must follow ValidatePassword; a bcrypt hash is kept as it
// is), and the record gets its secret with a password or the link on and
// loses it with neither (see ProtectionChange.apply).
func NormalizeProtection(rec *core.Record) error {
	if typed := rec.GetString(FieldProtectPasswordHash); typed != "" && !isPasswordHash(typed) {
		hash, err := HashPassword(typed)
		if err != nil {
			return err
		}
		rec.Set(FieldProtectPasswordHash, hash)
	}
	ProtectionChange{}.apply(rec)
	return nil
}

// isPasswordHash reports whether s reads as a bcrypt hash (its version
// and cost), as HashPassword makes.
func isPasswordHash(s string) bool {
	_, err := bcrypt.Cost([]byte(s))
	return err == nil
}

// ProtectionOf reads a deployment record's protection; nil for a public
// site.
func ProtectionOf(rec *core.Record) *Protection {
	p := &Protection{
		PasswordHash: rec.GetString(FieldProtectPasswordHash),
		Link:         rec.GetBool(FieldProtectLink),
		Secret:       rec.GetString(FieldProtectSecret),
	}
	if (p.PasswordHash == "" && !p.Link) || p.Secret == "" {
		return nil
	}
	return p
}

// SetProtection changes dep's protection through the same path as the
// other changes of a deployment (its lock, and a save that the record
// hooks bracket for the site server). It returns the saved record. ctx
// is the caller's request (the audit log names who changed it from it).
func (s *Service) SetProtection(ctx context.Context, dep *core.Record, c ProtectionChange) (*core.Record, error) {
	unlock := s.lockDeployment(dep.Id)
	defer unlock()
	fresh, err := s.app.FindRecordById(DeploymentsCollection, dep.Id)
	if err != nil {
		return nil, ErrNotFound
	}
	if c.IsZero() {
		return fresh, nil
	}
	c.apply(fresh)
	if err := s.app.SaveWithContext(context.WithoutCancel(ctx), fresh); err != nil { // see Create
		return nil, fmt.Errorf("save protection: %w", err)
	}
	return fresh, nil
}
