package hooks

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"sitedrop/sites/accounts"

	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tools/hook"
	"github.com/pocketbase/pocketbase/tools/mailer"
)

// mailWait is how long a test waits for a mail to reach the receiver.
const mailWait = 10 * time.Second

// useRealSMTP makes app's mail really go to rcv over TCP. A TestApp
// swaps every mailer for its TestMailer in an OnMailerSend handler of
// priority -99999; the handler bound here runs after it and puts a real
// SMTP client for rcv back in e.Mailer. PocketBase then sends with
// e.Mailer since it is not the client the event started from
// (core/base.go, NewMailClient). It returns the number of mails routed
// so. A running app (a served one) may be given too: hooks are bound
// under their own lock.
//
// The app's settings are left alone: saving them reloads them while the
// app's cron jobs may be logging, and PocketBase's logger reads the
// settings without a lock (a data race under -race in browser tests,
// whose app runs its jobs).
func useRealSMTP(t testing.TB, app core.App, rcv *smtpReceiver) *atomic.Int64 {
	t.Helper()
	var routed atomic.Int64
	app.OnMailerSend().Bind(&hook.Handler[*core.MailerEvent]{
		Id:       "sitedropTestRealSMTP",
		Priority: 0, // after the TestApp's -99999 handler
		Func: func(e *core.MailerEvent) error {
			e.Mailer = &mailer.SMTPClient{Host: "127.0.0.1", Port: rcv.Port()}
			routed.Add(1)
			return e.Next()
		},
	})
	return &routed
}

// codeDigits finds a sign-in code.
var codeDigits = regexp.MustCompile(`\b\d{8}\b`)

// loginCodeFrom waits for the sign-in mail to rcpt and returns it with
// the code from its text part.
func loginCodeFrom(t testing.TB, rcv *smtpReceiver, rcpt string) (parsedMail, string) {
	t.Helper()
	m := parseMail(t, rcv.waitMailTo(t, rcpt, mailWait).Data)
	code := codeDigits.FindString(m.Text)
	if code == "" {
		t.Fatalf("no 8-digit code in the text part %q", m.Text)
	}
	return m, code
}

func TestSignInOverRealSMTP(t *testing.T) {
	t.Parallel()
	start := time.Now()
	rcv := newSMTPReceiver(t)
	app, _ := newFixtureApp(t)
	t.Cleanup(app.Cleanup)
	routed := useRealSMTP(t, app, rcv)
	mux := newMux(t, app)

	const email = "smtp.newcomer@example.com"
	if _, err := app.FindAuthRecordByEmail(accounts.UsersCollection, email); err == nil {
		t.Fatal("the address must be new")
	}
	res, body := do(t, mux, http.MethodPost, "/auth/otp", fmt.Sprintf(`{"email":%q}`, email), nil)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("otp: %d %s", res.StatusCode, body)
	}
	var otp struct {
		ID string `json:"otp_id"`
	}
	if err := json.Unmarshal([]byte(body), &otp); err != nil || otp.ID == "" {
		t.Fatalf("otp answer %q: %v", body, err)
	}

	m, code := loginCodeFrom(t, rcv, email)
	if got := routed.Load(); got != 1 {
		t.Fatalf("%d mails routed to SMTP, want 1", got)
	}
	if n := app.TestMailer.TotalSend(); n != 0 {
		t.Fatalf("the test mailer caught %d mails: the mail did not go over SMTP", n)
	}
	mails := rcv.Mails()
	if len(mails) != 1 {
		t.Fatalf("receiver has %d mails, want 1", len(mails))
	}
	if env := mails[0]; len(env.To) != 1 || env.To[0] != email || env.From != app.Settings().Meta.SenderAddress {
		t.Fatalf("envelope from %q to %v", env.From, env.To)
	}
	if len(m.To) != 1 || m.To[0].Address != email {
		t.Fatalf("To: %v, want %s", m.To, email)
	}
	if m.Subject != "Your sitedrop sign-in code" {
		t.Fatalf("Subject: %q", m.Subject)
	}
	if len(m.From) != 1 || m.From[0].Address != app.Settings().Meta.SenderAddress {
		t.Fatalf("From: %v", m.From)
	}
	if m.HTML == "" || !strings.Contains(m.HTML, code) {
		t.Fatalf("the HTML part does not carry the code %s:\n%s", code, m.HTML)
	}
	if mt := m.Header.Get("Content-Type"); !strings.HasPrefix(mt, "multipart/") {
		t.Fatalf("Content-Type %q, want multipart", mt)
	}

	res, body = do(t, mux, http.MethodPost, "/auth/verify", fmt.Sprintf(`{"otp_id":%q,"code":%q}`, otp.ID, code), nil)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("verify: %d %s", res.StatusCode, body)
	}
	var out struct {
		APIKey string            `json:"api_key"`
		User   map[string]string `json:"user"`
	}
	if err := json.Unmarshal([]byte(body), &out); err != nil {
		t.Fatalf("verify answer %q: %v", body, err)
	}
	if !strings.HasPrefix(out.APIKey, accounts.APIKeyPrefix) || out.User["email"] != email {
		t.Fatalf("verify answer %s", body)
	}
	if !hasSessionCookie(res) {
		t.Fatalf("verify set no session cookie: %v", res.Header.Values("Set-Cookie"))
	}
	user, err := app.FindAuthRecordByEmail(accounts.UsersCollection, email)
	if err != nil {
		t.Fatalf("the user was not created: %v", err)
	}
	if user.Id != out.User["id"] {
		t.Fatalf("user id %s, answer says %s", user.Id, out.User["id"])
	}
	res, body = do(t, mux, http.MethodGet, "/deploys", "", bearer(out.APIKey))
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET /deploys with the new key: %d %s", res.StatusCode, body)
	}
	if errs := rcv.Errors(); len(errs) != 0 {
		t.Fatalf("SMTP protocol errors: %v", errs)
	}
	t.Logf("sign-in over SMTP took %v", time.Since(start).Round(time.Millisecond))
}

// hasSessionCookie reports whether res sets a non-empty session cookie.
func hasSessionCookie(res *http.Response) bool {
	for _, c := range res.Cookies() {
		if strings.HasSuffix(c.Name, "sitedrop_session") && c.Value != "" {
			return true
		}
	}
	return false
}
