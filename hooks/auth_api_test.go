package hooks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tests"

	"sitedrop/sites/accounts"
	"sitedrop/ui"
)

func TestAuthEndpoints(t *testing.T) {
	t.Parallel()
	closedSignup := func(t testing.TB) *tests.TestApp {
		app, sd := newFixtureApp(t)
		sd.cfg.Signup = false
		return app
	}
	noMail := func(t testing.TB, app *tests.TestApp, _ *http.Response) {
		if n := app.TestMailer.TotalSend(); n != 0 {
			t.Fatalf("%d mails sent, want none", n)
		}
	}
	runScenarios(t, []tests.ApiScenario{
		{
			Name:            "otp without email",
			Method:          http.MethodPost,
			URL:             "/auth/otp",
			Body:            strings.NewReader(`{}`),
			ExpectedStatus:  400,
			ExpectedContent: []string{errBody(msgEmailRequired)},
			TestAppFactory:  newTestApp,
			AfterTestFunc:   noMail,
		},
		{
			Name:            "otp with an invalid address",
			Method:          http.MethodPost,
			URL:             "/auth/otp",
			Body:            strings.NewReader(`{"email":"Alice <alice@example.com>"}`),
			ExpectedStatus:  400,
			ExpectedContent: []string{errBody(msgEmailInvalid)},
			TestAppFactory:  newTestApp,
			AfterTestFunc:   noMail,
		},
		{
			Name:            "otp with malformed JSON",
			Method:          http.MethodPost,
			URL:             "/auth/otp",
			Body:            strings.NewReader(`{"email":`),
			ExpectedStatus:  400,
			ExpectedContent: []string{`"error":"Malformed JSON`},
			TestAppFactory:  newTestApp,
		},
		{
			Name:            "otp for a known address mails a code",
			Method:          http.MethodPost,
			URL:             "/auth/otp",
			Body:            strings.NewReader(`{"email":"Alice@Example.com"}`),
			ExpectedStatus:  200,
			ExpectedContent: []string{`{"otp_id":"`},
			ExpectedEvents:  map[string]int{"OnMailerSend": 1},
			TestAppFactory:  newTestApp,
			AfterTestFunc: func(t testing.TB, app *tests.TestApp, _ *http.Response) {
				msg := app.TestMailer.LastMessage()
				if msg.To[0].Address != "alice@example.com" || !strings.Contains(msg.HTML, codeFromMail(t, app)) {
					t.Fatalf("mail to %v", msg.To)
				}
				recs, _ := app.FindAllRecords(accounts.LoginCodesCollection)
				if len(recs) != 1 || strings.Contains(recs[0].GetString("code_hash"), codeFromMail(t, app)) {
					t.Fatal("the code must be stored, hashed")
				}
			},
		},
		{
			Name:            "otp for an unknown address answers the same (sign-up open)",
			Method:          http.MethodPost,
			URL:             "/auth/otp",
			Body:            strings.NewReader(`{"email":"newcomer@example.com"}`),
			ExpectedStatus:  200,
			ExpectedContent: []string{`{"otp_id":"`},
			ExpectedEvents:  map[string]int{"OnMailerSend": 1},
			TestAppFactory:  newTestApp,
		},
		{
			Name:            "otp for an unknown address with sign-up closed: same answer, a no-account mail",
			Method:          http.MethodPost,
			URL:             "/auth/otp",
			Body:            strings.NewReader(`{"email":"newcomer@example.com"}`),
			ExpectedStatus:  200,
			ExpectedContent: []string{`{"otp_id":"`},
			ExpectedEvents:  map[string]int{"OnMailerSend": 1},
			TestAppFactory:  closedSignup,
			AfterTestFunc: func(t testing.TB, app *tests.TestApp, res *http.Response) {
				msg := app.TestMailer.LastMessage()
				if msg.Subject != ui.NoAccountMailSubject || regexp.MustCompile(`\d{8}`).MatchString(msg.Text) {
					t.Fatalf("mail %q: %q", msg.Subject, msg.Text)
				}
				var body struct {
					ID string `json:"otp_id"`
				}
				json.NewDecoder(res.Body).Decode(&body)
				if !regexp.MustCompile(`^[a-z0-9]{15}$`).MatchString(body.ID) {
					t.Fatalf("made-up id %q does not look like a real one", body.ID)
				}
				if n, err := app.CountRecords(accounts.LoginCodesCollection); err != nil || n != 0 {
					t.Fatalf("a code was stored for an address that cannot sign in: %d, %v", n, err)
				}
			},
		},
		{
			Name:            "otp with an address PocketBase would refuse",
			Method:          http.MethodPost,
			URL:             "/auth/otp",
			Body:            strings.NewReader(`{"email":"a@b"}`),
			ExpectedStatus:  400,
			ExpectedContent: []string{errBody(msgEmailInvalid)},
			TestAppFactory:  newTestApp,
			AfterTestFunc:   noMail,
		},
		{
			Name:            "verify from another site is refused (login CSRF)",
			Method:          http.MethodPost,
			URL:             "/auth/verify",
			Body:            strings.NewReader(`{"otp_id":"x","code":"12345678","x":"="}`),
			Headers:         map[string]string{"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site", "Content-Type": "text/plain"},
			ExpectedStatus:  403,
			ExpectedContent: []string{errBody("Cross-origin request refused")},
			TestAppFactory:  newTestApp,
		},
		{
			Name:            "verify without otp_id",
			Method:          http.MethodPost,
			URL:             "/auth/verify",
			Body:            strings.NewReader(`{"code":"123456"}`),
			ExpectedStatus:  400,
			ExpectedContent: []string{errBody("otp_id is required")},
			TestAppFactory:  newTestApp,
		},
		{
			Name:            "verify without code",
			Method:          http.MethodPost,
			URL:             "/auth/verify",
			Body:            strings.NewReader(`{"otp_id":"x"}`),
			ExpectedStatus:  400,
			ExpectedContent: []string{errBody("code is required")},
			TestAppFactory:  newTestApp,
		},
		{
			Name:            "verify an unknown code",
			Method:          http.MethodPost,
			URL:             "/auth/verify",
			Body:            strings.NewReader(`{"otp_id":"doesnotexist123","code":"123456"}`),
			ExpectedStatus:  400,
			ExpectedContent: []string{errBody(msgInvalidCode)},
			TestAppFactory:  newTestApp,
		},
		{
			Name:            "session without a key",
			Method:          http.MethodPost,
			URL:             "/auth/session",
			ExpectedStatus:  401,
			ExpectedContent: []string{errBody(msgUnauthorized)},
			TestAppFactory:  newTestApp,
		},
		{
			Name:            "session from a key sets the cookie",
			Method:          http.MethodPost,
			URL:             "/auth/session",
			Headers:         bearer(keyAlice),
			ExpectedStatus:  200,
			ExpectedContent: []string{`"user":{`, `"email":"alice@example.com"`, `"plan":"free"`},
			TestAppFactory:  newTestApp,
			AfterTestFunc: func(t testing.TB, app *tests.TestApp, res *http.Response) {
				c := res.Header.Get("Set-Cookie")
				for _, want := range []string{"sitedrop_session=", "Path=/", "HttpOnly", "SameSite=Lax"} {
					if !strings.Contains(c, want) {
						t.Errorf("cookie %q lacks %s", c, want)
					}
				}
				if strings.Contains(c, "Domain=") || strings.Contains(c, "Secure") {
					t.Errorf("cookie %q must be host-only and not Secure over plain HTTP", c)
				}
				tok := strings.TrimPrefix(strings.Split(c, ";")[0], "sitedrop_session=")
				if u, err := accounts.UserBySession(app, tok); err != nil || u.Email() != "alice@example.com" {
					t.Fatalf("session not stored: %v", err)
				}
			},
		},
		{
			Name:            "sign out ends the session",
			Method:          http.MethodDelete,
			URL:             "/auth/session",
			Headers:         cookie(sessionAlice),
			ExpectedStatus:  200,
			ExpectedContent: []string{`{"message":"Signed out"}`},
			TestAppFactory:  newTestApp,
			AfterTestFunc: func(t testing.TB, app *tests.TestApp, res *http.Response) {
				if _, err := accounts.UserBySession(app, sessionAlice); err == nil {
					t.Fatal("session still valid")
				}
				if c := res.Header.Get("Set-Cookie"); !strings.Contains(c, "Max-Age=0") {
					t.Fatalf("cookie not cleared: %q", c)
				}
			},
		},
		{
			Name:            "sign out from another origin is refused",
			Method:          http.MethodDelete,
			URL:             "/auth/session",
			Headers:         withHeaders(cookie(sessionAlice), map[string]string{"Sec-Fetch-Site": "same-site", "Origin": "http://alice-site.sites.test"}),
			ExpectedStatus:  403,
			ExpectedContent: []string{errBody("Cross-origin request refused")},
			TestAppFactory:  newTestApp,
			AfterTestFunc: func(t testing.TB, app *tests.TestApp, _ *http.Response) {
				if _, err := accounts.UserBySession(app, sessionAlice); err != nil {
					t.Fatal("a refused sign-out ended the session")
				}
			},
		},
		{
			Name:            "wrong method on /auth/otp",
			Method:          http.MethodGet,
			URL:             "/auth/otp",
			ExpectedStatus:  405,
			ExpectedContent: []string{errBody(msgMethodNotAllowed)},
			TestAppFactory:  newTestApp,
		},
		{
			Name:            "sign-in page",
			Method:          http.MethodGet,
			URL:             "/auth/login?next=/claim/anon-site%3Ftoken%3Dx",
			ExpectedStatus:  200,
			ExpectedContent: []string{`data-testid="email-form"`, `data-next="/claim/anon-site?token=x"`},
			TestAppFactory:  newTestApp,
		},
		{
			Name:               "sign-in page ignores a next on another host",
			Method:             http.MethodGet,
			URL:                "/auth/login?next=//evil.example/x",
			ExpectedStatus:     200,
			ExpectedContent:    []string{`data-next="/account"`},
			NotExpectedContent: []string{"evil.example"},
			TestAppFactory:     newTestApp,
		},
	})
}

// signIn runs the e-mail code flow against mux and returns the verify
// answer.
func signIn(t *testing.T, app *tests.TestApp, mux http.Handler, email string) (*http.Response, string) {
	t.Helper()
	res, body := do(t, mux, http.MethodPost, "/auth/otp", fmt.Sprintf(`{"email":%q}`, email), nil)
	if res.StatusCode != 200 {
		t.Fatalf("otp: %d %s", res.StatusCode, body)
	}
	var otp struct {
		ID string `json:"otp_id"`
	}
	json.Unmarshal([]byte(body), &otp)
	return do(t, mux, http.MethodPost, "/auth/verify",
		fmt.Sprintf(`{"otp_id":%q,"code":%q}`, otp.ID, codeFromMail(t, app)), nil)
}

func TestSignInFlow(t *testing.T) {
	t.Parallel()
	app, _ := newFixtureApp(t)
	defer app.Cleanup()
	mux := newMux(t, app)

	res, body := signIn(t, app, mux, "newcomer@example.com")
	if res.StatusCode != 200 {
		t.Fatalf("verify: %d %s", res.StatusCode, body)
	}
	var out struct {
		APIKey string            `json:"api_key"`
		User   map[string]string `json:"user"`
	}
	if err := json.Unmarshal([]byte(body), &out); err != nil {
		t.Fatal(err)
	}
	if out.User["email"] != "newcomer@example.com" || out.User["plan"] != "free" || out.User["id"] == "" {
		t.Fatalf("user %v", out.User)
	}
	// the key works on the API
	if res, body := do(t, mux, http.MethodGet, "/deploys", "", bearer(out.APIKey)); res.StatusCode != 200 {
		t.Fatalf("new key: %d %s", res.StatusCode, body)
	}
	// the cookie works on the pages
	c := res.Header.Get("Set-Cookie")
	tok := strings.TrimPrefix(strings.Split(c, ";")[0], "sitedrop_session=")
	if res, body := do(t, mux, http.MethodGet, "/account", "", cookie(tok)); res.StatusCode != 200 || !strings.Contains(body, "newcomer@example.com") {
		t.Fatalf("account with the new session: %d", res.StatusCode)
	}
}

func TestLoginCodeRules(t *testing.T) {
	t.Parallel()
	otpFor := func(t *testing.T, app *tests.TestApp, mux http.Handler, email string) (string, string) {
		res, body := do(t, mux, http.MethodPost, "/auth/otp", fmt.Sprintf(`{"email":%q}`, email), nil)
		if res.StatusCode != 200 {
			t.Fatalf("otp: %d %s", res.StatusCode, body)
		}
		var otp struct {
			ID string `json:"otp_id"`
		}
		json.Unmarshal([]byte(body), &otp)
		return otp.ID, codeFromMail(t, app)
	}
	verify := func(t *testing.T, mux http.Handler, id, code string) int {
		res, _ := do(t, mux, http.MethodPost, "/auth/verify", fmt.Sprintf(`{"otp_id":%q,"code":%q}`, id, code), nil)
		return res.StatusCode
	}
	wrong := func(code string) string {
		if code == "00000000" {
			return "11111111"
		}
		return "00000000"
	}

	t.Run("a code works once", func(t *testing.T) {
		app, _ := newFixtureApp(t)
		defer app.Cleanup()
		mux := newMux(t, app)
		id, code := otpFor(t, app, mux, "alice@example.com")
		if got := verify(t, mux, id, code); got != 200 {
			t.Fatalf("first use: %d", got)
		}
		if got := verify(t, mux, id, code); got != 400 {
			t.Fatalf("second use: %d", got)
		}
	})
	t.Run("five wrong tries kill the code", func(t *testing.T) {
		app, _ := newFixtureApp(t)
		defer app.Cleanup()
		mux := newMux(t, app)
		id, code := otpFor(t, app, mux, "alice@example.com")
		for i := range accounts.MaxCodeAttempts {
			if got := verify(t, mux, id, wrong(code)); got != 400 {
				t.Fatalf("wrong try %d: %d", i, got)
			}
		}
		if got := verify(t, mux, id, code); got != 400 {
			t.Fatalf("right code after five wrong ones: %d, want 400", got)
		}
		if n, err := app.CountRecords(accounts.LoginCodesCollection); err != nil || n != 0 {
			t.Fatalf("dead code not deleted: %d, %v", n, err)
		}
	})
	t.Run("four wrong tries leave the fifth", func(t *testing.T) {
		app, _ := newFixtureApp(t)
		defer app.Cleanup()
		mux := newMux(t, app)
		id, code := otpFor(t, app, mux, "alice@example.com")
		for range accounts.MaxCodeAttempts - 1 {
			verify(t, mux, id, wrong(code))
		}
		if got := verify(t, mux, id, code); got != 200 {
			t.Fatalf("right code on the last try: %d", got)
		}
	})
	t.Run("an expired code is refused", func(t *testing.T) {
		app, _ := newFixtureApp(t)
		defer app.Cleanup()
		mux := newMux(t, app)
		id, code := otpFor(t, app, mux, "alice@example.com")
		rec, _ := app.FindRecordById(accounts.LoginCodesCollection, id)
		rec.Set("expires_at", time.Now().Add(-time.Second).UTC())
		if err := app.Save(rec); err != nil {
			t.Fatal(err)
		}
		if got := verify(t, mux, id, code); got != 400 {
			t.Fatalf("expired code: %d", got)
		}
	})
	t.Run("sign-up closed", func(t *testing.T) {
		app, sd := newFixtureApp(t)
		defer app.Cleanup()
		sd.cfg.Signup = false
		mux := newMux(t, app)
		res, body := do(t, mux, http.MethodPost, "/auth/otp", `{"email":"stranger@example.com"}`, nil)
		if res.StatusCode != 200 || app.TestMailer.LastMessage().Subject != ui.NoAccountMailSubject {
			t.Fatalf("otp: %d %s, mail %q", res.StatusCode, body, app.TestMailer.LastMessage().Subject)
		}
		var otp struct {
			ID string `json:"otp_id"`
		}
		json.Unmarshal([]byte(body), &otp)
		if got := verify(t, mux, otp.ID, "123456"); got != 400 {
			t.Fatalf("verify of the dummy id: %d", got)
		}
		if _, err := app.FindAuthRecordByEmail("users", "stranger@example.com"); err == nil {
			t.Fatal("an account was created with sign-up closed")
		}
		// existing accounts still sign in
		if res, body := signIn(t, app, mux, "bob@example.com"); res.StatusCode != 200 {
			t.Fatalf("existing account: %d %s", res.StatusCode, body)
		}
		// a code issued while sign-up was open is refused once it closes
		sd.cfg.Signup = true
		id, code := otpFor(t, app, mux, "late@example.com")
		sd.cfg.Signup = false
		res, body = do(t, mux, http.MethodPost, "/auth/verify", fmt.Sprintf(`{"otp_id":%q,"code":%q}`, id, code), nil)
		if res.StatusCode != 403 || !strings.Contains(body, msgSignupClosed) {
			t.Fatalf("verify after sign-up closed: %d %s", res.StatusCode, body)
		}
	})
}

// TestAuthRateLimits: each sign-in endpoint has its per-IP limit from the
// contract's table; another IP has its own budget.
func TestAuthRateLimits(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		method, path, body string
		headers            map[string]string
		limit              int
	}{
		{http.MethodPost, "/auth/otp", `{"email":"person-%d@example.com"}`, nil, 3},
		{http.MethodPost, "/auth/verify", `{"otp_id":"nope","code":"12345678"}`, nil, 10},
		{http.MethodPost, "/auth/session", "", bearer(keyAlice), 5},
		{http.MethodGet, "/auth/login", "", nil, 30},
	} {
		t.Run(c.method+" "+c.path, func(t *testing.T) {
			t.Parallel()
			app, _ := newFixtureApp(t)
			defer app.Cleanup()
			mux := newMux(t, app)
			n := 0
			send := func(ip string) *http.Response {
				n++
				body := c.body
				if strings.Contains(body, "%d") {
					body = fmt.Sprintf(body, n) // a new address each time
				}
				req := newRequest(c.method, c.path, body, c.headers)
				req.RemoteAddr = ip + ":1234"
				return roundTrip(t, mux, req)
			}
			for i := range c.limit {
				if res := send("2001:db8:1:2::1"); res.StatusCode == 429 {
					t.Fatalf("request %d limited", i+1)
				}
			}
			res := send("2001:db8:1:2::ffff") // the same /64
			if res.StatusCode != 429 || res.Header.Get("Retry-After") == "" {
				t.Fatalf("request %d: %d, Retry-After %q", c.limit+1, res.StatusCode, res.Header.Get("Retry-After"))
			}
			if res := send("2001:db8:1:3::1"); res.StatusCode == 429 {
				t.Fatal("another client was limited")
			}
		})
	}
}

// TestSessionCookieNeverOnSiteHosts: a site host neither sets nor honours
// the session cookie.
func TestSessionCookieNeverOnSiteHosts(t *testing.T) {
	t.Parallel()
	runScenarios(t, []tests.ApiScenario{{
		Name:               "session endpoint on a site host",
		Method:             http.MethodPost,
		URL:                "http://alice-site.sites.test/auth/session",
		Headers:            bearer(keyAlice),
		ExpectedStatus:     405,
		ExpectedContent:    []string{"Method not allowed"},
		NotExpectedContent: []string{"alice@example.com"},
		TestAppFactory:     newTestApp,
		AfterTestFunc: func(t testing.TB, _ *tests.TestApp, res *http.Response) {
			if res.Header.Get("Set-Cookie") != "" {
				t.Fatal("a site host set a cookie")
			}
		},
	}, {
		Name:               "account page on a site host",
		Method:             http.MethodGet,
		URL:                "http://alice-site.sites.test/account",
		Headers:            cookie(sessionAlice),
		ExpectedStatus:     404,
		ExpectedContent:    []string{"Page not found"},
		NotExpectedContent: []string{"alice@example.com"},
		TestAppFactory:     newTestApp,
	}})
}

// TestCodesPerAddress: an address gets at most 3 codes in 10 minutes,
// whatever the client, and a new code ends the earlier ones.
func TestCodesPerAddress(t *testing.T) {
	t.Parallel()
	app, _ := newFixtureApp(t)
	defer app.Cleanup()
	mux := newMux(t, app)
	otp := func(ip string) (*http.Response, string) {
		req := newRequest(http.MethodPost, "/auth/otp", `{"email":"alice@example.com"}`, nil)
		req.RemoteAddr = ip + ":1234"
		res := roundTrip(t, mux, req)
		var body struct {
			ID string `json:"otp_id"`
		}
		json.NewDecoder(res.Body).Decode(&body)
		return res, body.ID
	}
	_, first := otp("198.51.100.1")
	firstCode := codeFromMail(t, app)
	_, second := otp("198.51.100.2")
	secondCode := codeFromMail(t, app)
	if res, _ := do(t, mux, http.MethodPost, "/auth/verify", fmt.Sprintf(`{"otp_id":%q,"code":%q}`, first, firstCode), nil); res.StatusCode != 400 {
		t.Fatalf("an earlier code still works: %d", res.StatusCode)
	}
	if res, _ := do(t, mux, http.MethodPost, "/auth/verify", fmt.Sprintf(`{"otp_id":%q,"code":%q}`, second, secondCode), nil); res.StatusCode != 200 {
		t.Fatalf("the newest code: %d", res.StatusCode)
	}
	otp("198.51.100.3")
	if res, _ := otp("198.51.100.4"); res.StatusCode != 429 {
		t.Fatalf("4th code for one address from a 4th client: %d, want 429", res.StatusCode)
	}
}

// TestSignInMailFailure: when the code cannot be mailed, the client gets
// a 503 that says so, no code stays valid, and the failure does not use
// up the address's codes.
func TestSignInMailFailure(t *testing.T) {
	t.Parallel()
	app, _ := newFixtureApp(t)
	defer app.Cleanup()
	mux := newMux(t, app)
	var fail atomic.Bool
	fail.Store(true)
	app.OnMailerSend().BindFunc(func(e *core.MailerEvent) error {
		if fail.Load() {
			return errors.New("no sendmail")
		}
		return e.Next()
	})
	otp := func(ip, email string) *http.Response {
		req := newRequest(http.MethodPost, "/auth/otp", fmt.Sprintf(`{"email":%q}`, email), nil)
		req.RemoteAddr = ip + ":1234"
		return roundTrip(t, mux, req)
	}
	for i := range 4 {
		res := otp(fmt.Sprintf("198.51.100.%d", i+1), "alice@example.com")
		body, _ := io.ReadAll(res.Body)
		if res.StatusCode != 503 || !strings.Contains(string(body), "Mail settings") {
			t.Fatalf("attempt %d: %d %s", i+1, res.StatusCode, body)
		}
	}
	closed, _ := newFixtureApp(t, func(c *Config) { c.Signup = false })
	defer closed.Cleanup()
	closed.OnMailerSend().BindFunc(func(*core.MailerEvent) error { return errors.New("no sendmail") })
	closedMux := newMux(t, closed)
	for i := range 4 { // the no-account mail fails: nothing is counted either
		req := newRequest(http.MethodPost, "/auth/otp", `{"email":"nobody@example.com"}`, nil)
		req.RemoteAddr = fmt.Sprintf("198.51.100.%d:1234", 40+i)
		if res := roundTrip(t, closedMux, req); res.StatusCode != 503 {
			t.Fatalf("unknown address, sign-up closed, attempt %d: %d", i+1, res.StatusCode)
		}
	}
	if n, err := app.CountRecords(accounts.LoginCodesCollection); err != nil || n != 0 {
		t.Fatalf("%d login codes kept though none was sent (%v)", n, err)
	}
	fail.Store(false)
	for i := range 3 {
		if res := otp(fmt.Sprintf("198.51.100.%d", 20+i), "alice@example.com"); res.StatusCode != 200 {
			t.Fatalf("code %d once mail works: %d", i+1, res.StatusCode)
		}
	}
	if res := otp("198.51.100.30", "alice@example.com"); res.StatusCode != 429 {
		t.Fatalf("a 4th sent code: %d, want 429", res.StatusCode)
	}
}

// TestSessionsFollowTheirKeys: a session made from a key ends when the key
// is revoked; signing out of a code sign-in revokes the key made for it.
func TestSessionsFollowTheirKeys(t *testing.T) {
	t.Parallel()
	app, _ := newFixtureApp(t)
	defer app.Cleanup()
	mux := newMux(t, app)

	res, _ := do(t, mux, http.MethodPost, "/auth/session", "", bearer(keyAlice))
	tok := strings.TrimPrefix(strings.Split(res.Header.Get("Set-Cookie"), ";")[0], "sitedrop_session=")
	if _, err := accounts.UserBySession(app, tok); err != nil {
		t.Fatal("no session")
	}
	if _, err := accounts.RevokeAPIKey(context.Background(), app, keyAlice[:11]); err != nil {
		t.Fatal(err)
	}
	if _, err := accounts.UserBySession(app, tok); err == nil {
		t.Fatal("a session outlived the key it was made with")
	}

	res, body := signIn(t, app, mux, "bob@example.com")
	var out struct {
		APIKey string `json:"api_key"`
	}
	json.Unmarshal([]byte(body), &out)
	tok = strings.TrimPrefix(strings.Split(res.Header.Get("Set-Cookie"), ";")[0], "sitedrop_session=")
	if res, _ := do(t, mux, http.MethodDelete, "/auth/session", "", cookie(tok)); res.StatusCode != 200 {
		t.Fatalf("sign out: %d", res.StatusCode)
	}
	if _, err := accounts.UserByAPIKey(app, out.APIKey); err == nil {
		t.Fatal("the key made for a browser sign-in survived its sign-out")
	}
	if _, err := accounts.UserByAPIKey(app, keyBob); err != nil {
		t.Fatal("signing out revoked another key")
	}
}

// TestLoginPageRateLimitAnswer: over its limit, GET /auth/login answers
// the JSON error to clients that do not ask for HTML, and the page to
// browsers.
func TestLoginPageRateLimitAnswer(t *testing.T) {
	t.Parallel()
	app, _ := newFixtureApp(t)
	mux := newMux(t, app)
	for i := range 30 {
		if res, _ := do(t, mux, http.MethodGet, "/auth/login", "", nil); res.StatusCode != 200 {
			t.Fatalf("request %d: %d", i+1, res.StatusCode)
		}
	}
	for _, c := range []struct {
		accept, contentType, body string
	}{
		{"", "application/json", errBody(msgRateLimited)},
		{"application/json", "application/json", errBody(msgRateLimited)},
		{"*/*", "application/json", errBody(msgRateLimited)},
		{"text/html,application/xhtml+xml,*/*;q=0.8", "text/html", `data-testid="error-page"`},
	} {
		res, body := do(t, mux, http.MethodGet, "/auth/login", "", map[string]string{"Accept": c.accept})
		if res.StatusCode != 429 || res.Header.Get("Retry-After") == "" ||
			!strings.HasPrefix(res.Header.Get("Content-Type"), c.contentType) || !strings.Contains(body, c.body) {
			t.Errorf("Accept %q: %d %s, Retry-After %q: %q", c.accept, res.StatusCode, res.Header.Get("Content-Type"), res.Header.Get("Retry-After"), body)
		}
	}
}
