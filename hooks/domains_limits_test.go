package hooks

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"sitedrop/sites/domains"
	"sitedrop/ui"
)

// TestDomainRateLimits: adding, removing and checking custom domains is
// limited per account (the API and the site page together), and the DNS
// questions the server asks per minute are bounded server-wide. A refusal
// is 429 {"error"} with Retry-After (the site page: its error flash),
// changes nothing and asks no DNS question; another account keeps its
// own count.
func TestDomainRateLimits(t *testing.T) {
	t.Parallel()
	dns := startFakeDNS(t)
	app, sd := newFixtureApp(t, func(c *Config) {
		c.Serve.DNSResolvers = []string{dns.addr}
		c.PublicIPs = []string{"127.0.0.1"}
		c.DomainsFree, c.DomainsPro = 50, 50
	})
	mux := newMux(t, app)
	api := "http://web.test/deploy/" + idAliceSite + "/domains"
	refused := func(what string, res *http.Response, body string) {
		t.Helper()
		secs, err := strconv.Atoi(res.Header.Get("Retry-After"))
		if res.StatusCode != http.StatusTooManyRequests || strings.TrimSpace(body) != errBody(msgRateLimited) || err != nil || secs < 1 || secs > 60 {
			t.Fatalf("%s: %d %s, Retry-After %q", what, res.StatusCode, body, res.Header.Get("Retry-After"))
		}
	}
	for i := range domainActionsPerMinute / 2 {
		name := fmt.Sprintf("d%d.custom.test", i)
		if res, body := do(t, mux, http.MethodPost, api, `{"domain":"`+name+`"}`, bearer(keyAlice)); res.StatusCode != http.StatusCreated {
			t.Fatalf("add %s: %d %s", name, res.StatusCode, body)
		}
		if res, body := do(t, mux, http.MethodPost, api+"/"+name+"/verify", "", bearer(keyAlice)); res.StatusCode != http.StatusOK {
			t.Fatalf("check %s: %d %s", name, res.StatusCode, body)
		}
	}
	asked := dns.questions.Load()
	res, body := do(t, mux, http.MethodPost, api, `{"domain":"over.custom.test"}`, bearer(keyAlice))
	refused("add over the account's limit", res, body)
	if _, err := domains.Find(app, idAliceSite, "over.custom.test"); err == nil {
		t.Fatal("a refused add claimed the domain")
	}
	res, body = do(t, mux, http.MethodPost, api+"/d0.custom.test/verify", "", bearer(keyAlice))
	refused("check over the account's limit", res, body)
	res, body = do(t, mux, http.MethodDelete, api+"/d0.custom.test", "", bearer(keyAlice))
	refused("delete over the account's limit", res, body)
	if _, err := domains.Find(app, idAliceSite, "d0.custom.test"); err != nil {
		t.Fatal("a refused delete removed the domain")
	}
	page := "http://web.test/account/sites/" + idAliceSite + "/domains"
	res, _ = do(t, mux, http.MethodPost, page, "domain=page.custom.test", withHeaders(sameOrigin, cookie(sessionAlice)))
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("page add over the account's limit: %d", res.StatusCode)
	}
	expectFlash(t, app, sessionAlice, ui.FlashError, "Domain not added: "+msgRateLimited)
	if _, err := domains.Find(app, idAliceSite, "page.custom.test"); err == nil {
		t.Fatal("a refused page add claimed the domain")
	}
	res, _ = do(t, mux, http.MethodPost, page+"/d1.custom.test/delete", "", withHeaders(sameOrigin, cookie(sessionAlice)))
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("page delete over the account's limit: %d", res.StatusCode)
	}
	expectFlash(t, app, sessionAlice, ui.FlashError, msgRateLimited)
	if _, err := domains.Find(app, idAliceSite, "d1.custom.test"); err != nil {
		t.Fatal("a refused page delete removed the domain")
	}
	if n := dns.questions.Load(); n != asked {
		t.Fatalf("refusals asked %d DNS questions", n-asked)
	}
	if res, body := do(t, mux, http.MethodPost, "http://web.test/deploy/"+idBobSite+"/domains", `{"domain":"bob.custom.test"}`, bearer(keyBob)); res.StatusCode != http.StatusCreated {
		t.Fatalf("another account: %d %s", res.StatusCode, body)
	}

	// the server's DNS questions: room for one check, then none
	budget := sd.domainSvc.DNSBudget()
	leave := func(room int) { // spends the budget down to room questions
		now := time.Now()
		budget.AllowN(domains.DNSBudgetKey, budget.Max()-room-budget.Count(domains.DNSBudgetKey, now), now)
	}
	leave(domains.DNSQuestionsPerCheck)
	asked = dns.questions.Load()
	if res, body := do(t, mux, http.MethodPost, "http://web.test/deploy/"+idBobSite+"/domains/bob.custom.test/verify", "", bearer(keyBob)); res.StatusCode != http.StatusOK {
		t.Fatalf("a check within the server's DNS budget: %d %s", res.StatusCode, body)
	}
	if n := dns.questions.Load() - asked; n == 0 || n > domains.DNSQuestionsPerCheck {
		t.Fatalf("one check asked %d questions", n)
	}
	leave(0) // the rest of the minute's budget, taken
	asked = dns.questions.Load()
	res, body = do(t, mux, http.MethodPost, "http://web.test/deploy/"+idBobSite+"/domains", `{"domain":"bob2.custom.test"}`, bearer(keyBob))
	refused("add over the server's DNS budget", res, body)
	if _, err := domains.Find(app, idBobSite, "bob2.custom.test"); err == nil {
		t.Fatal("an add refused for the DNS budget claimed the domain")
	}
	res, body = do(t, mux, http.MethodPost, "http://web.test/deploy/"+idBobSite+"/domains/bob.custom.test/verify", "", bearer(keyBob))
	refused("check over the server's DNS budget", res, body)
	if _, err := app.DB().NewQuery("UPDATE domains SET checked = '2000-01-01 00:00:00.000Z'").Execute(); err != nil {
		t.Fatal(err)
	}
	sd.jobs.Run(sd.domainSvc.CheckPending) // its checks wait for the budget too
	if n := dns.questions.Load(); n != asked {
		t.Fatalf("over the server's DNS budget, %d questions were asked", n-asked)
	}
}
