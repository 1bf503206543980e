package hooks

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tests"
)

// PocketBase's own auth endpoints of the users collection are closed:
// sitedrop signs in by its own e-mail codes and keys, and no built-in path
// may mail or authenticate around its limits.
func TestBuiltinUserAuthClosed(t *testing.T) {
	t.Parallel()
	const api = "/api/collections/users/"
	noMail := func(t testing.TB, app *tests.TestApp, _ *http.Response) {
		if n := app.TestMailer.TotalSend(); n != 0 {
			t.Fatalf("%d mails sent, want none", n)
		}
	}
	refused := func(name, path, body string, status int, msg string) tests.ApiScenario {
		return tests.ApiScenario{
			Name:            name,
			Method:          http.MethodPost,
			URL:             api + path,
			Body:            strings.NewReader(body),
			Headers:         map[string]string{"Content-Type": "application/json"},
			ExpectedStatus:  status,
			ExpectedContent: []string{msg},
			TestAppFactory:  newTestApp,
			AfterTestFunc:   noMail,
		}
	}
	const (
		pwOff    = "not configured to allow password authentication"
		otpOff   = "not configured to allow OTP authentication"
		oauthOff = "not configured to allow OAuth2 authentication"
	)
	runScenarios(t, []tests.ApiScenario{
		refused("auth-with-password", "auth-with-password", `{"identity":"alice@example.com","password":"whatever1"}`, 403, pwOff),
		refused("request-password-reset", "request-password-reset", `{"email":"alice@example.com"}`, 400, pwOff),
		refused("request-otp", "request-otp", `{"email":"alice@example.com"}`, 403, otpOff),
		refused("auth-with-otp", "auth-with-otp", `{"otpId":"abc","password":"12345678"}`, 403, otpOff),
		refused("auth-with-oauth2", "auth-with-oauth2", `{"provider":"github","code":"x","codeVerifier":"y","redirectURL":"http://web.test/"}`, 403, oauthOff),
		// no collection option closes these: a request hook refuses them,
		// the same for known and unknown addresses
		refused("request-verification, known address", "request-verification", `{"email":"alice@example.com"}`, 403, msgBuiltinAuthClosed),
		refused("request-verification, unknown address", "request-verification", `{"email":"nobody@example.com"}`, 403, msgBuiltinAuthClosed),
		refused("confirm-verification", "confirm-verification", `{"token":"x"}`, 403, msgBuiltinAuthClosed),
		refused("request-email-change", "request-email-change", `{"newEmail":"new@example.com"}`, 403, msgBuiltinAuthClosed),
		refused("confirm-email-change", "confirm-email-change", `{"token":"x","password":"y"}`, 403, msgBuiltinAuthClosed),
		refused("confirm-password-reset", "confirm-password-reset", `{"token":"x","password":"12345678","passwordConfirm":"12345678"}`, 403, msgBuiltinAuthClosed),
		{
			Name:            "the collection's id closes them too",
			Method:          http.MethodPost,
			URL:             "/api/collections/_pb_users_auth_/request-verification",
			Body:            strings.NewReader(`{"email":"alice@example.com"}`),
			ExpectedStatus:  403,
			ExpectedContent: []string{msgBuiltinAuthClosed},
			TestAppFactory:  newTestApp,
			AfterTestFunc:   noMail,
		},
	})
}

// A superuser signs in to the dashboard with a password: sitedrop's rate
// limits bound the tries per client (an IPv6 client by its /64).
func TestSuperuserLoginRateLimited(t *testing.T) {
	t.Parallel()
	app, _ := newBareApp(t)
	su := mustSuperuser(t, app, "admin@example.com", "right-password-123")
	mux := newMux(t, app)
	const api = "/api/collections/_superusers/"
	for _, c := range []struct {
		path, body string
		allowed    int
		status     int // of the allowed tries
	}{
		{"auth-with-password", `{"identity":"admin@example.com","password":"wrong-password"}`, superuserAuthTries, 400},
		{"auth-with-otp", `{"otpId":"abcdefghijklmno","password":"12345678"}`, superuserAuthTries, 403}, // OTP is off
		{"request-otp", `{"email":"admin@example.com"}`, superuserMailTries, 403},
		{"request-password-reset", `{"email":"nobody@example.com"}`, superuserMailTries, 204},
		{"confirm-password-reset", `{"token":"x","password":"12345678901","passwordConfirm":"12345678901"}`, superuserAuthTries, 400},
	} {
		t.Run(c.path, func(t *testing.T) {
			send := func(ip string) *http.Response {
				req := newRequest(http.MethodPost, api+c.path, c.body, map[string]string{"Content-Type": "application/json"})
				req.RemoteAddr = ip + ":1234"
				return roundTrip(t, mux, req)
			}
			for i := range c.allowed {
				if res := send("192.0.2.7"); res.StatusCode != c.status {
					t.Fatalf("try %d: %d, want %d", i+1, res.StatusCode, c.status)
				}
			}
			if res := send("192.0.2.7"); res.StatusCode != http.StatusTooManyRequests {
				t.Fatalf("try %d: %d, want 429", c.allowed+1, res.StatusCode)
			}
			if res := send("192.0.2.8"); res.StatusCode != c.status {
				t.Fatalf("another address: %d, want %d", res.StatusCode, c.status)
			}
			// an IPv6 client is counted by its /64, as by sitedrop's
			// other limits
			for range c.allowed {
				send("[2001:db8:1:2::7]")
			}
			if res := send("[2001:db8:1:2::8]"); res.StatusCode != http.StatusTooManyRequests || res.Header.Get("Retry-After") == "" {
				t.Fatalf("same /64: %d (Retry-After %q), want 429 with Retry-After", res.StatusCode, res.Header.Get("Retry-After"))
			}
		})
	}
	// the right password is not locked out for the other address, and
	// the dashboard's own calls (as a superuser) are not limited
	req := newRequest(http.MethodPost, api+"auth-with-password", `{"identity":"admin@example.com","password":"right-password-123"}`, map[string]string{"Content-Type": "application/json"})
	req.RemoteAddr = "192.0.2.9:1234"
	if res := roundTrip(t, mux, req); res.StatusCode != 200 {
		t.Fatalf("right password: %d", res.StatusCode)
	}
	tok, err := su.NewAuthToken()
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 * superuserAuthTries {
		req := newRequest(http.MethodPost, api+"auth-refresh", "", map[string]string{"Authorization": tok})
		req.RemoteAddr = "192.0.2.7:1234"
		if res := roundTrip(t, mux, req); res.StatusCode != 200 {
			t.Fatalf("dashboard call %d: %d", i+1, res.StatusCode)
		}
	}
}

func mustCollection(t testing.TB, app core.App, name string) *core.Collection {
	t.Helper()
	c, err := app.FindCollectionByNameOrId(name)
	if err != nil {
		t.Fatal(fmt.Errorf("find %s: %w", name, err))
	}
	return c
}

// mustSuperuser creates a superuser (an admin of the dashboard).
func mustSuperuser(t testing.TB, app core.App, email, password string) *core.Record {
	t.Helper()
	su := core.NewRecord(mustCollection(t, app, core.CollectionNameSuperusers))
	su.SetEmail(email)
	su.SetPassword(password)
	if err := app.Save(su); err != nil {
		t.Fatal(fmt.Errorf("save superuser %s: %w", email, err))
	}
	return su
}

// superuserToken creates a superuser and returns an auth token of it, as
// the dashboard sends in Authorization.
func superuserToken(t testing.TB, app core.App) string {
	t.Helper()
	token, err := mustSuperuser(t, app, "admin@example.com", "a-long-password").NewAuthToken()
	if err != nil {
		t.Fatal(fmt.Errorf("superuser token: %w", err))
	}
	return token
}
