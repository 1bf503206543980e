package hooks

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tests"

	"sitedrop/sites/domains"
)

// domainsAppFactory is newTestApp verifying custom domains against dns,
// with 127.0.0.1 (the address fakeDNS gives every .test name) as the
// server's public address.
func domainsAppFactory(dns *fakeDNS) func(t testing.TB) *tests.TestApp {
	return func(t testing.TB) *tests.TestApp {
		app, _ := newFixtureApp(t, func(c *Config) {
			c.Serve.DNSResolvers = []string{dns.addr}
			c.PublicIPs = []string{"127.0.0.1"}
		})
		return app
	}
}

// mustDomain claims name for the deployment, verified when verified.
func mustDomain(t testing.TB, app core.App, depID, name string, verified bool) *domains.Domain {
	t.Helper()
	rec, err := domains.Add(context.Background(), app, depID, name)
	if err != nil {
		t.Fatal(err)
	}
	if verified {
		if rec, err = domains.Result(app, rec, nil, time.Now().UTC()); err != nil {
			t.Fatal(err)
		}
	}
	return rec
}

func TestDomainsAPI(t *testing.T) {
	t.Parallel()
	dns := startFakeDNS(t)
	factory := domainsAppFactory(dns)
	url := "/deploy/" + idAliceSite + "/domains"
	create := func(name, body string, status int, content ...string) tests.ApiScenario {
		return tests.ApiScenario{
			Name: name, Method: http.MethodPost, URL: url, Headers: bearer(keyAlice), Body: strings.NewReader(body),
			ExpectedStatus: status, ExpectedContent: content, TestAppFactory: factory,
		}
	}
	scenarios := []tests.ApiScenario{
		{
			Name: "without a key", Method: http.MethodPost, URL: url, Body: strings.NewReader(`{"domain":"shop.custom.test"}`),
			ExpectedStatus: 401, ExpectedContent: []string{errBody(msgUnauthorized)}, TestAppFactory: factory,
		},
		{
			Name: "someone else's deployment", Method: http.MethodPost, URL: url, Headers: bearer(keyBob),
			Body: strings.NewReader(`{"domain":"shop.custom.test"}`), ExpectedStatus: 404,
			ExpectedContent: []string{errBody(msgNotFound)}, TestAppFactory: factory,
		},
		create("a subdomain: CNAME and TXT, checked at once", `{"domain":"Shop.Custom.TEST."}`, 201,
			`"domain":"shop.custom.test"`, `"status":"pending"`,
			`"reason":"no TXT record at _sitedrop-challenge.shop.custom.test"`,
			`{"type":"CNAME","name":"shop.custom.test","value":"alice-site.sites.test"}`,
			`{"type":"TXT","name":"_sitedrop-challenge.shop.custom.test","value":"sitedrop-verify-`,
			`"url":"http://shop.custom.test/"`, `"checked_at":"`),
		create("an apex: A records of --public-ip", `{"domain":"custom.test"}`, 201,
			`{"type":"A","name":"custom.test","value":"127.0.0.1"}`, `"name":"_sitedrop-challenge.custom.test"`),
		create("an internationalised name", `{"domain":"bücher.custom.test"}`, 201, `"domain":"xn--bcher-kva.custom.test"`),
		create("no domain", `{}`, 400, errBody(domains.ErrEmpty.Error())),
		create("an IP", `{"domain":"192.0.2.1"}`, 400, errBody(domains.ErrIP.Error())),
		create("not a domain", `{"domain":"https://shop.custom.test/"}`, 400, errBody(domains.ErrNotDomain.Error())),
		create("a public suffix", `{"domain":"co.uk"}`, 400, errBody(domains.ErrSuffix.Error())),
		create("too long", `{"domain":"`+strings.Repeat("abcdefghi.", 24)+`custom.test"}`, 400, errBody(domains.ErrTooLong.Error())),
		create("under --sites-domain", `{"domain":"bob-site.sites.test"}`, 400, errBody(domains.ErrReserved.Error())),
		create("the web host", `{"domain":"web.test"}`, 400, errBody(domains.ErrReserved.Error())),
		{
			Name: "verified on another site", Method: http.MethodPost, URL: url, Headers: bearer(keyAlice),
			Body: strings.NewReader(`{"domain":"taken.custom.test"}`), ExpectedStatus: 409,
			ExpectedContent: []string{errBody(domains.ErrTaken.Error())}, TestAppFactory: factory,
			BeforeTestFunc: func(t testing.TB, app *tests.TestApp, _ *core.ServeEvent) {
				mustDomain(t, app, idBobSite, "taken.custom.test", true)
			},
		},
		{
			Name:   "an old claim of a domain since verified by another site: 409, the claim unchanged",
			Method: http.MethodPost, URL: url, Headers: bearer(keyAlice),
			Body: strings.NewReader(`{"domain":"taken.custom.test"}`), ExpectedStatus: 409,
			ExpectedContent: []string{errBody(domains.ErrTaken.Error())}, TestAppFactory: factory,
			BeforeTestFunc: func(t testing.TB, app *tests.TestApp, _ *core.ServeEvent) {
				mustDomain(t, app, idAliceSite, "taken.custom.test", false)
				mustDomain(t, app, idBobSite, "taken.custom.test", true) // fails Alice's claim
			},
			AfterTestFunc: func(t testing.TB, app *tests.TestApp, _ *http.Response) {
				rec, err := domains.Find(app, idAliceSite, "taken.custom.test")
				if err != nil || rec.GetString("status") != domains.StatusFailed {
					t.Fatalf("Alice's claim after the refusal: %v %v", rec, err)
				}
			},
		},
		{
			Name: "over the free plan's limit", Method: http.MethodPost, URL: url, Headers: bearer(keyAlice),
			Body: strings.NewReader(`{"domain":"second.custom.test"}`), ExpectedStatus: 403,
			ExpectedContent: []string{errBody("Custom domain limit reached (1 on the free plan). Remove a domain or upgrade your plan.")},
			TestAppFactory:  factory,
			BeforeTestFunc: func(t testing.TB, app *tests.TestApp, _ *core.ServeEvent) {
				mustDomain(t, app, idAliceSite, "first.custom.test", false)
			},
		},
		{
			Name: "the same domain again: 200, checked again", Method: http.MethodPost, URL: url, Headers: bearer(keyAlice),
			Body: strings.NewReader(`{"domain":"first.custom.test"}`), ExpectedStatus: 200,
			ExpectedContent: []string{`"domain":"first.custom.test"`, `"status":"pending"`}, TestAppFactory: factory,
			BeforeTestFunc: func(t testing.TB, app *tests.TestApp, _ *core.ServeEvent) {
				mustDomain(t, app, idAliceSite, "first.custom.test", false)
			},
		},
		{
			Name: "list", Method: http.MethodGet, URL: url, Headers: bearer(keyAlice), ExpectedStatus: 200,
			ExpectedContent: []string{`{"domains":[{"domain":"first.custom.test","status":"pending","records":[`},
			TestAppFactory:  factory,
			BeforeTestFunc: func(t testing.TB, app *tests.TestApp, _ *core.ServeEvent) {
				mustDomain(t, app, idAliceSite, "first.custom.test", false)
			},
		},
		{
			Name: "list of someone else's deployment", Method: http.MethodGet, URL: url, Headers: bearer(keyBob),
			ExpectedStatus: 404, ExpectedContent: []string{errBody(msgNotFound)}, TestAppFactory: factory,
		},
		{
			Name: "delete", Method: http.MethodDelete, URL: url + "/first.custom.test", Headers: bearer(keyAlice),
			ExpectedStatus: 200, ExpectedContent: []string{`"message":"Domain first.custom.test removed from alice-site"`},
			TestAppFactory: factory,
			BeforeTestFunc: func(t testing.TB, app *tests.TestApp, _ *core.ServeEvent) {
				mustDomain(t, app, idAliceSite, "first.custom.test", false)
			},
			AfterTestFunc: func(t testing.TB, app *tests.TestApp, _ *http.Response) {
				if n, err := domains.CountOwned(app, mustFindUser(t, app, "alice@example.com").Id); err != nil || n != 0 {
					t.Errorf("%d domains left (%v)", n, err)
				}
			},
		},
		{
			Name: "delete by someone else", Method: http.MethodDelete, URL: url + "/first.custom.test", Headers: bearer(keyBob),
			ExpectedStatus: 404, ExpectedContent: []string{errBody(msgNotFound)}, TestAppFactory: factory,
			BeforeTestFunc: func(t testing.TB, app *tests.TestApp, _ *core.ServeEvent) {
				mustDomain(t, app, idAliceSite, "first.custom.test", false)
			},
		},
		{
			Name: "delete a domain the site does not have", Method: http.MethodDelete, URL: url + "/other.custom.test",
			Headers: bearer(keyAlice), ExpectedStatus: 404, ExpectedContent: []string{errBody(msgDomainNotFound)},
			TestAppFactory: factory,
		},
		{
			Name: "wrong method", Method: http.MethodPut, URL: url, Headers: bearer(keyAlice),
			ExpectedStatus: 405, ExpectedContent: []string{errBody(msgMethodNotAllowed)}, TestAppFactory: factory,
		},
	}
	runScenarios(t, scenarios)
}

func mustFindUser(t testing.TB, app core.App, email string) *core.Record {
	t.Helper()
	u, err := app.FindAuthRecordByEmail("users", email)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// TestDomainVerifyNowAndJob: once the TXT record is there, "check now"
// and the job verify a claim; the site then answers at the domain.
func TestDomainVerifyNowAndJob(t *testing.T) {
	t.Parallel()
	dns := startFakeDNS(t)
	app, sd := newFixtureApp(t, func(c *Config) {
		c.Serve.DNSResolvers = []string{dns.addr}
		c.PublicIPs = []string{"127.0.0.1"}
		c.DomainsPro = 3
	})
	mux := newMux(t, app)
	add := func(key, id, name string) map[string]any {
		res, body := do(t, mux, http.MethodPost, "http://web.test/deploy/"+id+"/domains", `{"domain":"`+name+`"}`, bearer(key))
		if res.StatusCode != http.StatusCreated {
			t.Fatalf("add %s: %d %s", name, res.StatusCode, body)
		}
		var out map[string]any
		json.Unmarshal([]byte(body), &out)
		return out
	}
	token := func(d map[string]any) string {
		recs := d["records"].([]any)
		return recs[len(recs)-1].(map[string]any)["value"].(string)
	}
	setTXT := func(name, value string) {
		dns.mu.Lock()
		dns.txt["_sitedrop-challenge."+name+"."] = []string{value}
		dns.mu.Unlock()
	}

	// alice: a wrong TXT, then the right one and "check now"
	shop := add(keyAlice, idAliceSite, "shop.custom.test")
	setTXT("shop.custom.test", "sitedrop-verify-wrong")
	res, body := do(t, mux, http.MethodPost, "http://web.test/deploy/"+idAliceSite+"/domains/shop.custom.test/verify", "", bearer(keyAlice))
	if res.StatusCode != 200 || !strings.Contains(body, `"reason":"the TXT record at _sitedrop-challenge.shop.custom.test does not hold this domain's token"`) {
		t.Fatalf("check with a wrong TXT: %d %s", res.StatusCode, body)
	}
	if status, _ := hostGet(t, mux, "shop.custom.test", "/"); status != http.StatusNotFound {
		t.Errorf("pending domain answers %d, want 404", status)
	}
	setTXT("shop.custom.test", token(shop))
	res, body = do(t, mux, http.MethodPost, "http://web.test/deploy/"+idAliceSite+"/domains/shop.custom.test/verify", "", bearer(keyAlice))
	if res.StatusCode != 200 || !strings.Contains(body, `"status":"verified"`) || !strings.Contains(body, `"verified_at":"`) {
		t.Fatalf("check with the TXT: %d %s", res.StatusCode, body)
	}
	if status, body := hostGet(t, mux, "shop.custom.test:8090", "/"); status != 200 || !strings.Contains(body, "alice") {
		t.Errorf("verified domain = %d %q", status, body)
	}

	// pia: a pending claim that the job verifies on its next run
	pia := mustFindUser(t, app, "pia@example.com")
	piaSite := mustDeploy(t, sd, pia, "piasite00000001", "pia-site", "<h1>pia</h1>", "")
	apex := add(keyPia, piaSite.Id, "pia.test")
	www := add(keyPia, piaSite.Id, "www.pia.test")
	setTXT("pia.test", token(apex))
	setTXT("www.pia.test", token(www))
	// checked at once on POST, then by the job's next run, whenever it is
	sd.jobs.Run(sd.domainSvc.CheckPending)
	if hosts, _ := domains.VerifiedHosts(app, piaSite.Id); strings.Join(hosts, " ") != "pia.test www.pia.test" {
		t.Fatalf("after the job: %v", hosts)
	}
	if status, body := hostGet(t, mux, "pia.test", "/"); status != 200 || !strings.Contains(body, "pia") {
		t.Errorf("apex = %d %q", status, body)
	}
	req := httptest.NewRequest(http.MethodGet, "http://www.pia.test:8090/a/b?c=d", nil)
	res = serveRaw(mux, req)
	if res.StatusCode != http.StatusMovedPermanently || res.Header.Get("Location") != "http://pia.test:8090/a/b?c=d" {
		t.Errorf("www = %d to %q", res.StatusCode, res.Header.Get("Location"))
	}
	// web routes never answer on a custom domain
	if status, _ := hostGet(t, mux, "pia.test", "/api/health"); status != http.StatusNotFound {
		t.Errorf("/api/health on a custom domain = %d", status)
	}
	// removing the apex: www serves the site itself
	res, _ = do(t, mux, http.MethodDelete, "http://web.test/deploy/"+piaSite.Id+"/domains/pia.test", "", bearer(keyPia))
	if res.StatusCode != 200 {
		t.Fatalf("delete apex: %d", res.StatusCode)
	}
	if status, body := hostGet(t, mux, "www.pia.test", "/"); status != 200 || !strings.Contains(body, "pia") {
		t.Errorf("www alone = %d %q", status, body)
	}
	if _, body := hostGet(t, mux, "pia.test", "/"); strings.Contains(body, "<h1>pia</h1>") {
		t.Error("a removed domain still serves the site") // it is an unknown host again
	}
	// deleting the deployment releases its domains
	if err := app.Delete(piaSite); err != nil {
		t.Fatal(err)
	}
	if _, body := hostGet(t, mux, "www.pia.test", "/"); strings.Contains(body, "<h1>pia</h1>") {
		t.Error("a deleted site's domain still serves")
	}
	if n, _ := app.CountRecords(domains.Collection); n != 1 { // alice's
		t.Errorf("%d domains left, want 1", n)
	}
}

// hostGet sends GET path with Host host through mux.
func hostGet(t testing.TB, mux http.Handler, host, path string) (int, string) {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, "http://"+host+path, nil)
	res := serveRaw(mux, req)
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// serveRaw sends req through mux and returns the recorded response.
func serveRaw(mux http.Handler, req *http.Request) *http.Response {
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, req)
	return rec.Result()
}
