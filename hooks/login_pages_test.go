package hooks

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"sitedrop/sites/accounts"
)

// TestLoginForms signs in with the sign-in page's forms alone, as a browser
// without JavaScript does, and checks their refusals.
func TestLoginForms(t *testing.T) {
	t.Parallel()
	app, _ := newFixtureApp(t)
	defer app.Cleanup()
	mux := newMux(t, app)
	const next = "/claim/anon-site?token=x"
	post := func(path string, kv ...string) (*http.Response, string) {
		t.Helper()
		v := url.Values{}
		for i := 0; i < len(kv); i += 2 {
			v.Set(kv[i], kv[i+1])
		}
		return do(t, mux, http.MethodPost, path, v.Encode(), withHeaders(sameOrigin, map[string]string{"Accept": "text/html"}))
	}

	res, body := post("/auth/login", "email", "not an address", "next", next)
	if res.StatusCode != 400 || !strings.Contains(body, `data-testid="login-error"`) || !strings.Contains(body, msgEmailInvalid) ||
		!strings.Contains(body, `value="not an address"`) || !strings.Contains(body, `value="`+next+`"`) {
		t.Fatalf("bad address: %d\n%s", res.StatusCode, body)
	}

	res, _ = post("/auth/login", "email", " Alice@Example.com ", "next", next)
	loc := res.Header.Get("Location")
	if res.StatusCode != 303 || !strings.HasPrefix(loc, "/auth/login?otp=") || !strings.HasSuffix(loc, "&next="+url.QueryEscape(next)) {
		t.Fatalf("e-mail form: %d to %q", res.StatusCode, loc)
	}
	code := codeFromMail(t, app)
	u, _ := url.Parse(loc)
	otp := u.Query().Get("otp")

	res, body = do(t, mux, http.MethodGet, loc, "", nil)
	if res.StatusCode != 200 || !strings.Contains(body, `name="otp_id" id="otp-id" value="`+otp+`"`) ||
		!strings.Contains(body, `action="/auth/login/code" novalidate>`) || !strings.Contains(body, `action="/auth/login" novalidate hidden>`) {
		t.Fatalf("code step: %d\n%s", res.StatusCode, body)
	}
	if _, body = do(t, mux, http.MethodGet, "/auth/login?otp=../../x", "", nil); !strings.Contains(body, `action="/auth/login/code" novalidate hidden>`) {
		t.Fatal("a malformed otp id shows the code step")
	}

	wrong := "00000000"
	if code == wrong {
		wrong = "11111111"
	}
	// a wrong code spends a try: POST → 303 → GET, so a reload does not
	// spend another; the code step says why
	res, _ = post("/auth/login/code", "otp_id", otp, "code", wrong, "next", next)
	expectRedirect(t, res, "/auth/login?otp="+otp+"&next="+url.QueryEscape(next)+"&error=code")
	res, body = do(t, mux, http.MethodGet, res.Header.Get("Location"), "", nil)
	if res.StatusCode != 200 || !strings.Contains(body, msgInvalidCode) || !strings.Contains(body, `value="`+otp+`"`) ||
		!strings.Contains(body, `action="/auth/login/code" novalidate>`) {
		t.Fatalf("wrong code: %d\n%s", res.StatusCode, body)
	}
	res, _ = post("/auth/login/code", "otp_id", otp, "code", " ", "next", next)
	expectRedirect(t, res, "/auth/login?otp="+otp+"&next="+url.QueryEscape(next)+"&error=no-code")
	if _, body = do(t, mux, http.MethodGet, res.Header.Get("Location"), "", nil); !strings.Contains(body, "code is required") {
		t.Fatalf("no code: %s", body)
	}
	// the key is a key, never text: an unknown one says nothing
	if _, body = do(t, mux, http.MethodGet, "/auth/login?otp="+otp+"&error=%3Cb%3Ehi", "", nil); strings.Contains(body, "login-error") {
		t.Fatal("an unknown error key shows a message")
	}

	res, _ = post("/auth/login/code", "otp_id", otp, "code", code[:4]+" "+code[4:], "next", next)
	expectRedirect(t, res, next)
	var token string
	for _, c := range res.Cookies() {
		if c.Name == "sitedrop_session" {
			token = c.Value
		}
	}
	if u, err := accounts.UserBySession(app, token); err != nil || u.Email() != "alice@example.com" {
		t.Fatalf("not signed in as alice: %v", err)
	}

	// the same limits as /auth/otp: 3 codes a minute per client
	post("/auth/login", "email", "bob@example.com")
	post("/auth/login", "email", "bob@example.com")
	res, body = post("/auth/login", "email", "bob@example.com")
	if res.StatusCode != 429 || !strings.Contains(body, msgRateLimited) || res.Header.Get("Retry-After") == "" {
		t.Fatalf("over the limit: %d\n%s", res.StatusCode, body)
	}
	// another origin is refused
	res, _ = do(t, mux, http.MethodPost, "/auth/login/code", "otp_id="+otp+"&code="+code,
		map[string]string{"Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site", "Content-Type": "application/x-www-form-urlencoded"})
	if res.StatusCode != 403 {
		t.Fatalf("cross-origin code form: %d", res.StatusCode)
	}
}
