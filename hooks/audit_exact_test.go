package hooks

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/pocketbase/dbx"
	"github.com/pocketbase/pocketbase/core"

	"sitedrop/sites/accounts"
	"sitedrop/sites/audit"
	"sitedrop/sites/domains"
	"sitedrop/sites/forms"
)

// otherClientIP is the address of a second client of the same account.
const otherClientIP = "198.51.100.7"

// inFlight starts a deploy of key's account from ip that stays in flight
// (its body unfinished, after its caller is known) until the returned
// func is called: another request of the same owner, from elsewhere, at
// the time of the actions a test logs.
func inFlight(t testing.TB, mux http.Handler, key, ip string) (release func()) {
	t.Helper()
	pr, pw := io.Pipe()
	req := httptest.NewRequest(http.MethodPost, "/deploy", pr)
	for k, v := range withHeaders(bearer(key), map[string]string{"Content-Type": "application/json"}) {
		req.Header.Set(k, v)
	}
	req.RemoteAddr = ip + ":4321"
	done := make(chan struct{})
	go func() {
		defer close(done)
		mux.ServeHTTP(httptest.NewRecorder(), req)
	}()
	// returns once the handler reads the body: past its auth
	if _, err := pw.Write([]byte(`{"html":"`)); err != nil {
		t.Fatalf("the request in flight ended early: %v", err)
	}
	return func() {
		pw.CloseWithError(io.ErrUnexpectedEOF)
		<-done
	}
}

// exactEntry is onlyEntry of alice's action about target, from the test
// client's address while another request of alice's is in flight from
// another address.
func exactEntry(t testing.TB, app core.App, action, target string) {
	t.Helper()
	alice, err := app.FindAuthRecordByEmail("users", "alice@example.com")
	if err != nil {
		t.Fatal(err)
	}
	onlyEntry(t, app, action, target, audit.KindUser, alice.Id, testClientIP, alice.Id)
}

// A rename, a pause and a resume, through the API and the pages, are
// logged with their own request's caller and address, even while the
// owner has another request in flight from another address.
func TestAuditExactSiteControls(t *testing.T) {
	app, _ := newFixtureApp(t)
	mux := newMux(t, app)
	defer inFlight(t, mux, keyAlice, otherClientIP)()

	res, body := do(t, mux, http.MethodPost, "/deploy/"+idAliceSite+"/rename", `{"slug":"alice-new"}`, withHeaders(bearer(keyAlice), map[string]string{"Content-Type": "application/json"}))
	if res.StatusCode != http.StatusOK {
		t.Fatalf("rename: %d %s", res.StatusCode, body)
	}
	exactEntry(t, app, audit.ActionRename, idAliceSite)
	res, body = do(t, mux, http.MethodPost, "/deploy/"+idAliceSite+"/pause", ``, bearer(keyAlice))
	if res.StatusCode != http.StatusOK {
		t.Fatalf("pause: %d %s", res.StatusCode, body)
	}
	exactEntry(t, app, audit.ActionPause, idAliceSite)
	res, body = do(t, mux, http.MethodPost, "/account/sites/"+idAliceSite+"/resume", "", withHeaders(sameOrigin, cookie(sessionAlice)))
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("resume page: %d %s", res.StatusCode, body)
	}
	exactEntry(t, app, audit.ActionResume, idAliceSite)
}

// Protecting a site in its Settings tab is logged with its own request's
// caller and address, while the owner has another request in flight.
func TestAuditExactProtection(t *testing.T) {
	app, _ := newFixtureApp(t)
	mux := newMux(t, app)
	defer inFlight(t, mux, keyAlice, otherClientIP)()

	res, body := do(t, mux, http.MethodPost, "/account/sites/"+idAliceSite+"/protection", "action=link-on", withHeaders(sameOrigin, cookie(sessionAlice)))
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("protection page: %d %s", res.StatusCode, body)
	}
	exactEntry(t, app, audit.ActionProtect, idAliceSite)
}

// An API key created and revoked in the account page is logged with its
// own request's caller and address, while the owner has another request
// in flight.
func TestAuditExactKeys(t *testing.T) {
	app, _ := newFixtureApp(t)
	mux := newMux(t, app)
	defer inFlight(t, mux, keyAlice, otherClientIP)()

	res, body := do(t, mux, http.MethodPost, "/account/keys", "name=exact", withHeaders(sameOrigin, cookie(sessionAlice)))
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("create key: %d %s", res.StatusCode, body)
	}
	key, err := app.FindFirstRecordByData(accounts.APIKeysCollection, accounts.FieldName, "exact")
	if err != nil {
		t.Fatal(err)
	}
	exactEntry(t, app, audit.ActionKeyCreate, key.Id)
	res, body = do(t, mux, http.MethodPost, "/account/keys/"+key.Id+"/revoke", "confirm=yes", withHeaders(sameOrigin, cookie(sessionAlice)))
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("revoke key: %d %s", res.StatusCode, body)
	}
	exactEntry(t, app, audit.ActionKeyRevoke, key.Id)
}

// A custom domain added through the API and removed in the site's page is
// logged with its own request's caller and address, while the owner has
// another request in flight.
func TestAuditExactDomains(t *testing.T) {
	app := domainsAppFactory(startFakeDNS(t))(t)
	mux := newMux(t, app)
	defer inFlight(t, mux, keyAlice, otherClientIP)()

	res, body := do(t, mux, http.MethodPost, "/deploy/"+idAliceSite+"/domains", `{"domain":"shop.custom.test"}`, bearer(keyAlice))
	if res.StatusCode != http.StatusCreated {
		t.Fatalf("add domain: %d %s", res.StatusCode, body)
	}
	d, err := app.FindFirstRecordByData(domains.Collection, "domain", "shop.custom.test")
	if err != nil {
		t.Fatal(err)
	}
	exactEntry(t, app, audit.ActionDomainAdd, d.Id)
	res, body = do(t, mux, http.MethodPost, "/account/sites/"+idAliceSite+"/domains/shop.custom.test/delete", "", withHeaders(sameOrigin, cookie(sessionAlice)))
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("remove domain: %d %s", res.StatusCode, body)
	}
	exactEntry(t, app, audit.ActionDomainRemove, d.Id)
}

// A webhook created through the API and deleted in the site's page is
// logged with its own request's caller and address, while the owner has
// another request in flight.
func TestAuditExactWebhooks(t *testing.T) {
	app, _ := newFixtureApp(t)
	mux := newMux(t, app)
	defer inFlight(t, mux, keyAlice, otherClientIP)()

	res, body := do(t, mux, http.MethodPost, "/webhooks/"+idAliceSite, `{"url":"https://93.184.216.34/exact"}`, bearer(keyAlice))
	if res.StatusCode != http.StatusOK {
		t.Fatalf("create webhook: %d %s", res.StatusCode, body)
	}
	w, err := app.FindFirstRecordByData(forms.WebhooksCollection, "url", "https://93.184.216.34/exact")
	if err != nil {
		t.Fatal(err)
	}
	exactEntry(t, app, audit.ActionWebhookCreate, w.Id)
	res, body = do(t, mux, http.MethodPost, "/account/sites/"+idAliceSite+"/webhooks/"+w.Id+"/delete", "", withHeaders(sameOrigin, cookie(sessionAlice)))
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("delete webhook: %d %s", res.StatusCode, body)
	}
	exactEntry(t, app, audit.ActionWebhookDelete, w.Id)
}

// The key a code sign-in makes is logged as the account's that signs in,
// from its request's address, while the owner has another request in
// flight from elsewhere.
func TestAuditExactSignIn(t *testing.T) {
	app, _ := newFixtureApp(t)
	mux := newMux(t, app)
	defer inFlight(t, mux, keyAlice, otherClientIP)()

	res, body := signIn(t, app, mux, "alice@example.com")
	if res.StatusCode != http.StatusOK {
		t.Fatalf("sign in: %d %s", res.StatusCode, body)
	}
	alice, err := app.FindAuthRecordByEmail("users", "alice@example.com")
	if err != nil {
		t.Fatal(err)
	}
	keys, err := app.FindRecordsByFilter(accounts.APIKeysCollection, "user = {:u} && name ~ 'Web sign-in'", "-created", 1, 0, dbx.Params{"u": alice.Id})
	if err != nil || len(keys) != 1 {
		t.Fatalf("the sign-in's key: %v", err)
	}
	exactEntry(t, app, audit.ActionKeyCreate, keys[0].Id)
}

// A claim, a rollback, a promote and a deletion through the API are
// logged with their own request's caller and address, while the owner
// has another request in flight.
func TestAuditExactVersionsClaimDelete(t *testing.T) {
	app, sd := newFixtureApp(t)
	mux := newMux(t, app)
	defer inFlight(t, mux, keyAlice, otherClientIP)()
	json := map[string]string{"Content-Type": "application/json"}

	anon := mustAnon(t, sd, "", "anon-exact", "claim-token-of-the-exact-test", time.Now().Add(time.Hour))
	res, body := do(t, mux, http.MethodPost, "/deploy/claim", `{"slug":"anon-exact","claim_token":"claim-token-of-the-exact-test"}`, withHeaders(bearer(keyAlice), json))
	if res.StatusCode != http.StatusOK {
		t.Fatalf("claim: %d %s", res.StatusCode, body)
	}
	exactEntry(t, app, audit.ActionClaim, anon.Id)

	res, body = do(t, mux, http.MethodPut, "/deploy/"+idAliceSite, `{"html":"<h1>two</h1>"}`, withHeaders(bearer(keyAlice), json))
	if res.StatusCode != http.StatusOK {
		t.Fatalf("update: %d %s", res.StatusCode, body)
	}
	res, body = do(t, mux, http.MethodPost, "/deploy/"+idAliceSite+"/rollback", `{"version":1}`, withHeaders(bearer(keyAlice), json))
	if res.StatusCode != http.StatusOK {
		t.Fatalf("rollback: %d %s", res.StatusCode, body)
	}
	exactEntry(t, app, audit.ActionRollback, idAliceSite)
	res, body = do(t, mux, http.MethodPost, "/deploy/"+idAliceSite+"/versions/2/promote", ``, bearer(keyAlice))
	if res.StatusCode != http.StatusOK {
		t.Fatalf("promote: %d %s", res.StatusCode, body)
	}
	exactEntry(t, app, audit.ActionPromote, idAliceSite)

	res, body = do(t, mux, http.MethodDelete, "/deploy/"+idAliceSite, ``, bearer(keyAlice))
	if res.StatusCode >= 300 {
		t.Fatalf("delete: %d %s", res.StatusCode, body)
	}
	exactEntry(t, app, audit.ActionDelete, idAliceSite)
}

// Signing another browser out in the account page revokes the key made
// for its session: logged with the request's caller and address, while
// the owner has another request in flight.
func TestAuditExactSessionKey(t *testing.T) {
	app, _ := newFixtureApp(t)
	mux := newMux(t, app)
	defer inFlight(t, mux, keyAlice, otherClientIP)()
	alice, err := app.FindAuthRecordByEmail("users", "alice@example.com")
	if err != nil {
		t.Fatal(err)
	}
	other := mustCodeSession(t, app, alice)

	res, body := do(t, mux, http.MethodPost, "/account/sessions/"+other.Id+"/revoke", "", withHeaders(sameOrigin, cookie(sessionAlice)))
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign the other browser out: %d %s", res.StatusCode, body)
	}
	exactEntry(t, app, audit.ActionKeyRevoke, other.GetString(accounts.FieldAPIKey))
}

// The domains and webhooks a deletion takes with its deployment (by
// PocketBase's cascade, which has no context) are logged as the
// deletion's, while the owner has another request in flight.
func TestAuditExactCascade(t *testing.T) {
	app, _ := newFixtureApp(t)
	mux := newMux(t, app)
	defer inFlight(t, mux, keyAlice, otherClientIP)()
	d := mustDomain(t, app, idAliceSite, "www.alice.example", false)
	w := mustWebhook(t, app, idAliceSite, "https://hooks.example.com/alice")

	res, body := do(t, mux, http.MethodDelete, "/deploy/"+idAliceSite, ``, bearer(keyAlice))
	if res.StatusCode >= 300 {
		t.Fatalf("delete: %d %s", res.StatusCode, body)
	}
	exactEntry(t, app, audit.ActionDelete, idAliceSite)
	exactEntry(t, app, audit.ActionDomainRemove, d.Id)
	exactEntry(t, app, audit.ActionWebhookDelete, w.Id)
}

// Signing out revokes the key the sign-in made: logged as the account's,
// from the sign-out's address, while the owner has another request in
// flight (the sign-out's route loads no user of its own).
func TestAuditExactSignOut(t *testing.T) {
	app, _ := newFixtureApp(t)
	mux := newMux(t, app)
	res, body := signIn(t, app, mux, "alice@example.com")
	if res.StatusCode != http.StatusOK {
		t.Fatalf("sign in: %d %s", res.StatusCode, body)
	}
	var tok string
	for _, c := range res.Cookies() {
		tok = c.Value
	}
	s, err := app.FindFirstRecordByData(accounts.SessionsCollection, "token_hash", accounts.HashSecret(tok))
	if err != nil {
		t.Fatal(err)
	}
	defer inFlight(t, mux, keyAlice, otherClientIP)()

	res, body = do(t, mux, http.MethodDelete, "/auth/session", "", withHeaders(sameOrigin, cookie(tok)))
	if res.StatusCode != http.StatusOK {
		t.Fatalf("sign out: %d %s", res.StatusCode, body)
	}
	exactEntry(t, app, audit.ActionKeyRevoke, s.GetString(accounts.FieldAPIKey))
}
