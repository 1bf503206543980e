package serve

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"hash"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Names of the gate's cookie: under TLS the __Host- prefix makes the
// browser keep it host-only, Secure and at Path=/ whatever else happens.
const (
	gateCookieName       = "sitedrop_gate"
	secureGateCookieName = "__Host-sitedrop_gate"
)

// maxGateCookie bounds the cookie values the gate reads: a site id, a
// Unix time and a MAC are far shorter.
const maxGateCookie = 256

// signGateCookie returns the value of a gate cookie for site id that
// expires at exp: "<id>.<exp>.<mac>", where mac is the HMAC-SHA256, under
// the site's cookie key (sites.Protection.CookieKey), of "v1.<id>.<exp>".
// The id inside binds the cookie to the site, not to the host: the same
// site at another host has its own host-only cookie of the same form.
func signGateCookie(key []byte, id string, exp time.Time) string {
	payload := id + "." + strconv.FormatInt(exp.Unix(), 10)
	return payload + "." + string(newCookieMAC(key).encoded(payload))
}

// verifyGateCookie reports whether v is a cookie signed with m's key for
// site id and not expired at now. The MAC is compared in constant time.
func verifyGateCookie(m *cookieMAC, id, v string, now time.Time) bool {
	if len(v) > maxGateCookie {
		return false
	}
	dot := strings.LastIndexByte(v, '.')
	if dot < 0 {
		return false
	}
	payload, sig := v[:dot], v[dot+1:]
	cid, expText, ok := strings.Cut(payload, ".")
	if !ok || cid != id {
		return false
	}
	exp, err := strconv.ParseInt(expText, 10, 64)
	if err != nil || strconv.FormatInt(exp, 10) != expText || now.Unix() >= exp {
		return false
	}
	// Compared encoded: the decoder would skip a \r or \n inside sig,
	// and only the exact value the signer makes may pass.
	want := m.encoded(payload)
	m.buf = append(m.buf[:0], sig...)
	return hmac.Equal(m.buf, want)
}

// cookieMAC computes gate cookies' MACs under one key: HMAC-SHA256 of
// "v1." + payload. Keyed once and Reset for each cookie, it starts from
// the key's saved state, in a quarter of a new HMAC's time, and it
// allocates nothing: a site's gate checks a cookie on every request and
// keeps a pool of them (siteGate.macs). One goroutine uses it at a time.
type cookieMAC struct {
	h   hash.Hash
	buf []byte // the MAC's input, then the value it is compared with
	sum [sha256.Size]byte
	enc [encodedMACLen]byte
}

// encodedMACLen is the length of a MAC in a cookie: base64url, no
// padding (base64.RawURLEncoding.EncodedLen(sha256.Size)).
const encodedMACLen = (sha256.Size*8 + 5) / 6

func newCookieMAC(key []byte) *cookieMAC {
	return &cookieMAC{h: hmac.New(sha256.New, key)}
}

// encoded returns payload's MAC, base64url-encoded without padding, in
// m's own buffer: valid until m's next use.
func (m *cookieMAC) encoded(payload string) []byte {
	m.h.Reset()
	m.buf = append(append(m.buf[:0], "v1."...), payload...)
	m.h.Write(m.buf)
	base64.RawURLEncoding.Encode(m.enc[:], m.h.Sum(m.sum[:0]))
	return m.enc[:]
}

// passedGate reports whether r carries a valid gate cookie of g's site.
func (g *siteGate) passedGate(r *http.Request, now time.Time) bool {
	m, _ := g.macs.Get().(*cookieMAC)
	if m == nil {
		m = newCookieMAC(g.key)
	}
	defer g.macs.Put(m)
	for _, c := range r.Cookies() {
		if (c.Name == gateCookieName || c.Name == secureGateCookieName) && verifyGateCookie(m, g.cookieID, c.Value, now) {
			return true
		}
	}
	return false
}

// setGateCookie lets r's client in for ttl: host-only (no Domain),
// Path=/, HttpOnly, SameSite=Lax; Secure and __Host- under TLS.
func (g *siteGate) setGateCookie(w http.ResponseWriter, secure bool, now time.Time, ttl time.Duration) {
	name := gateCookieName
	if secure {
		name = secureGateCookieName
	}
	exp := now.Add(ttl)
	http.SetCookie(w, &http.Cookie{
		Name:     name,
		Value:    signGateCookie(g.key, g.cookieID, exp),
		Path:     "/",
		Expires:  exp,
		MaxAge:   int(ttl / time.Second),
		HttpOnly: true,
		Secure:   secure,
		SameSite: http.SameSiteLaxMode,
	})
}
