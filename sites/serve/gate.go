package serve

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"sitedrop/sites"
)

// GatePath is where a protected site's gate form posts, on the site's
// own host. It is reserved on protected sites only: a public site's file
// at this path is served as any other.
const GatePath = "/.sitedrop/gate"

// TokenParam is the query parameter of a share link.
const TokenParam = sites.ShareTokenParam

// DefaultGateCookieTTL is how long a passed gate lets a visitor in, when
// ServerOptions.GateCookieTTL is zero (the server's --protect-cookie-ttl
// default).
const DefaultGateCookieTTL = 7 * 24 * time.Hour

// maxGateForm bounds the body of a gate form post.
const maxGateForm = 4 << 10

// defaultGateBodyTimeout is how long a gate form's body may take to
// arrive, all of it: the form is at most maxGateForm bytes, which any
// client sends in one packet, so a trickling client is cut off instead of
// holding its connection and goroutine at no cost.
const defaultGateBodyTimeout = 10 * time.Second

// siteGate is a protected site's gate, prepared once per loaded site:
// the cookie key is derived here, not per request, and keyed MACs are
// kept for the next request.
type siteGate struct {
	// id is the site's: the password attempts' limits are the site's,
	// whichever of its hosts they come to.
	id string
	// cookieID is what its cookies are bound to: the site's id, and for
	// a preview the preview's label too (see newSiteGate).
	cookieID string
	p        sites.Protection
	key      []byte    // cookie MAC key
	macs     sync.Pool // of *cookieMAC under key; empty at first
}

// newSiteGate prepares p's gate for site id, or for its preview label
// preview (not ""); nil for a public site. A preview's cookie is bound
// to "<id>~<preview>": the live site's cookie does not open a preview,
// nor one preview's another, even when a client sends it to that host.
func newSiteGate(id, preview string, p *sites.Protection) *siteGate {
	if p == nil {
		return nil
	}
	cookieID := id
	if preview != "" {
		cookieID = id + "~" + preview
	}
	return &siteGate{id: id, cookieID: cookieID, p: *p, key: p.CookieKey()}
}

// gate decides a GET or HEAD of a protected site: it reports true when r
// may be served (the visitor passed), and otherwise has answered it: a
// share link's visit is let in with a cookie and sent, 303, to the same
// URL without the token; anything else gets the gate page (401).
func (s *Server) gate(w http.ResponseWriter, r *http.Request, st *site) (pass bool, status int) {
	g := st.gate
	now := s.now()
	passed := g.passedGate(r, now)
	if strings.Contains(r.URL.RawQuery, TokenParam+"=") {
		if tok, rest, ok := takeToken(r.URL.RawQuery); ok {
			valid := g.p.CheckToken(tok)
			if valid {
				g.setGateCookie(w, s.secure(r), now, s.gateTTL)
			}
			if valid || passed {
				target := sameHostPath(r.URL.Path)
				if rest != "" {
					target += "?" + rest
				}
				h := w.Header()
				h.Set("Location", target)
				h["Cache-Control"] = noStoreValue
				h["Referrer-Policy"] = noReferrerValue
				w.WriteHeader(http.StatusSeeOther)
				return false, http.StatusSeeOther
			}
			writeGate(w, r, g, http.StatusUnauthorized, gateNext(r.URL.Path, rest), gateBadLink)
			return false, http.StatusUnauthorized
		}
	}
	if passed {
		return true, 0
	}
	writeGate(w, r, g, http.StatusUnauthorized, r.URL.RequestURI(), "")
	return false, http.StatusUnauthorized
}

// gatePost answers the gate form (POST GatePath) of a protected site. A
// post a browser sends from another origin (another site's page among
// them) is refused, 403, before anything is counted or checked; a visitor
// who already holds a valid cookie goes on (303 to the form's next path)
// without a check. Otherwise the password is checked within the limits:
// the right one sets the cookie and redirects (303) to next; a wrong one
// shows the gate again with an error (401); too many failures of this
// client, 429; no password check slot free in time, 503.
func (s *Server) gatePost(w http.ResponseWriter, r *http.Request, st *site) int {
	g := st.gate
	if err := gateOrigin.Check(r); err != nil {
		writeGate(w, r, g, http.StatusForbidden, "/", gateCrossOrigin)
		return http.StatusForbidden
	}
	// The deadline is the connection's; the server sets the next
	// request's own when it reads its headers. Where the writer cannot
	// set one (a wrapper without Unwrap, a test recorder), the size cap
	// alone bounds the body.
	_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(s.gateBodyTimeout))
	r.Body = http.MaxBytesReader(w, r.Body, maxGateForm)
	if err := r.ParseForm(); err != nil {
		_, _ = io.Copy(io.Discard, r.Body)
		plainError(w, http.StatusBadRequest, "Bad form")
		return http.StatusBadRequest
	}
	next := localPath(r.PostForm.Get("next"))
	now := s.now()
	if g.passedGate(r, now) {
		redirectGatePassed(w, next)
		return http.StatusSeeOther
	}
	if g.p.PasswordHash == "" {
		writeGate(w, r, g, http.StatusUnauthorized, next, "")
		return http.StatusUnauthorized
	}
	ip := r.RemoteAddr
	if s.clientIP != nil {
		ip = s.clientIP(r)
	}
	failures, ok, pass := s.gateLimit.attempt(g.id, ip, now)
	if !ok {
		writeGate(w, r, g, http.StatusTooManyRequests, next, gateTooMany)
		return http.StatusTooManyRequests
	}
	release, ok := s.gateChecks.acquire(r.Context(), g.id, failures)
	if !ok {
		pass() // not checked: no failure
		writeGate(w, r, g, http.StatusServiceUnavailable, next, gateBusy)
		return http.StatusServiceUnavailable
	}
	right := g.p.CheckPassword(r.PostForm.Get("password"))
	release()
	if !right {
		writeGate(w, r, g, http.StatusUnauthorized, next, gateWrongPassword)
		return http.StatusUnauthorized
	}
	pass()
	g.setGateCookie(w, s.secure(r), now, s.gateTTL)
	redirectGatePassed(w, next)
	return http.StatusSeeOther
}

// gateOrigin refuses gate posts that a browser sends from a page of
// another origin (Sec-Fetch-Site, else Origin against Host): the gate
// page posts to its own origin, and a post from elsewhere could only
// sign the visitor in unasked or spend their attempts.
var gateOrigin = http.NewCrossOriginProtection()

// redirectGatePassed sends a visitor who passed the gate to next.
func redirectGatePassed(w http.ResponseWriter, next string) {
	h := w.Header()
	h.Set("Location", next)
	h["Cache-Control"] = noStoreValue
	w.WriteHeader(http.StatusSeeOther)
}

// secure reports whether r came over TLS (as the server's options say),
// which makes the cookie Secure and __Host-.
func (s *Server) secure(r *http.Request) bool {
	if s.secureCookies != nil {
		return s.secureCookies(r)
	}
	return r.TLS != nil
}

// takeToken finds the share token in a raw query and returns it with the
// rest of the query, in its order; ok is false when there is none.
func takeToken(rawQuery string) (tok, rest string, ok bool) {
	var kept []string
	for _, part := range strings.Split(rawQuery, "&") {
		k, v, _ := strings.Cut(part, "=")
		if k == TokenParam {
			if !ok {
				tok, _ = url.QueryUnescape(v)
				ok = true
			}
			continue
		}
		if part != "" {
			kept = append(kept, part)
		}
	}
	return tok, strings.Join(kept, "&"), ok
}

// gateNext is the path and query a passed gate leads back to.
func gateNext(p, rawQuery string) string {
	if rawQuery == "" {
		return p
	}
	return p + "?" + rawQuery
}

// sameHostPath escapes a request path for a Location header, keeping it
// on the same host: a path that starts with two slashes (or a slash and
// a backslash) would be read as another host.
func sameHostPath(p string) string {
	return (&url.URL{Path: safeLocation(p)}).EscapedPath()
}

// localPath keeps a form's next on the site: a path with its query, no
// scheme, host or control characters; "/" otherwise.
func localPath(next string) string {
	if next == "" || next[0] != '/' || len(next) > maxRequestPath {
		return "/"
	}
	if len(next) > 1 && (next[1] == '/' || next[1] == '\\') {
		return "/"
	}
	for i := 0; i < len(next); i++ {
		if c := next[i]; c < 0x20 || c == 0x7f || c == '\\' {
			return "/"
		}
	}
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" || u.Opaque != "" {
		return "/"
	}
	return next
}
