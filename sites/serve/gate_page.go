package serve

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"html/template"
	"net/http"
	"strconv"
)

// gateHTML is the gate page's template: self-contained (one inline style
// allowed by its hash, no script, image, font or other origin), with a
// labelled password field when the site has a password.
//
//go:embed gate.html
var gateHTML string

var gateTemplate = template.Must(template.New("gate").Parse(gateHTML))

// gateStyle is the gate page's only style sheet.
const gateStyle = `
:root { --bg: #f7f8fa; --fg: #1f2328; --muted: #59636e; --line: #8c959f; --accent: #0969da; --err: #b42318; }
@media (prefers-color-scheme: dark) {
  :root { --bg: #0d1117; --fg: #e6edf3; --muted: #9198a1; --line: #6e7681; --accent: #4493f8; --err: #ff7b72; }
}
html, body { margin: 0; }
body {
  display: flex; align-items: center; justify-content: center; min-height: 100vh;
  padding: 1.5rem; box-sizing: border-box; background: var(--bg); color: var(--fg);
  font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
}
main { width: 100%; max-width: 22rem; }
h1 { margin: 0 0 1rem; font-size: 1.5rem; line-height: 1.25; }
p { margin: 0 0 1rem; overflow-wrap: anywhere; }
.muted { color: var(--muted); }
.error { color: var(--err); font-weight: 600; }
form { display: flex; flex-direction: column; gap: .5rem; margin: 0 0 1rem; }
label { font-weight: 600; }
input, button { font: inherit; padding: .6rem .75rem; border-radius: 6px; box-sizing: border-box; width: 100%; }
input { border: 1px solid var(--line); background: var(--bg); color: var(--fg); }
button { border: 0; background: var(--accent); color: #fff; font-weight: 600; cursor: pointer; }
@media (prefers-color-scheme: dark) { button { color: #0d1117; } }
input:focus-visible, button:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
`

// gateCSPValue is the gate page's Content-Security-Policy: nothing but its
// own style, and forms posted to its own origin.
var gateCSPValue = func() []string {
	sum := sha256.Sum256([]byte(gateStyle))
	return []string{"default-src 'none'; style-src 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) +
		"'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"}
}()

var noReferrerValue = []string{"no-referrer"}

// gatePage is what the gate page shows.
type gatePage struct {
	Style    template.CSS
	Action   string
	Next     string
	Error    string
	Password bool // the site has a password: show the form
	Link     bool // the site has a share link: mention it
}

// Messages of the gate page.
const (
	gateWrongPassword = "Wrong password. Try again."
	gateTooMany       = "Too many attempts. Wait a minute, then try again."
	gateBusy          = "The server is busy checking passwords. Try again in a few seconds."
	gateBadLink       = "This link is not valid (any more). Ask the owner of the site for a new one."
	gateCrossOrigin   = "The password must be sent from this page. Enter it again."
)

// writeGate answers status with the gate page of g: not cached, under
// its own CSP; HEAD gets the headers only. next is where a passed
// password leads back to.
func writeGate(w http.ResponseWriter, r *http.Request, g *siteGate, status int, next, errMsg string) {
	var buf bytes.Buffer
	_ = gateTemplate.Execute(&buf, gatePage{
		Style: gateStyle, Action: GatePath, Next: next, Error: errMsg,
		Password: g.p.PasswordHash != "", Link: g.p.Link,
	})
	h := w.Header()
	h["Content-Type"] = htmlTypeValue
	h["Cache-Control"] = noStoreValue
	h["Content-Security-Policy"] = gateCSPValue
	h["Referrer-Policy"] = noReferrerValue
	h["Content-Length"] = []string{strconv.Itoa(buf.Len())}
	switch status {
	case http.StatusTooManyRequests:
		h.Set("Retry-After", "60")
	case http.StatusServiceUnavailable:
		h.Set("Retry-After", "5")
	}
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		_, _ = w.Write(buf.Bytes())
	}
}
