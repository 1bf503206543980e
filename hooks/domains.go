package hooks

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/pocketbase/pocketbase/core"

	"sitedrop/sites"
	"sitedrop/sites/domains"
)

// What the API and the site page share about custom domains: adding one
// (with the plan limit), checking it, and the answer that lists it.

// domainCheckTimeout bounds one verification (all its DNS lookups).
const domainCheckTimeout = 15 * time.Second

// Limits of the custom domains' routes (in memory: each server counts
// its own).
const (
	// domainActionsPerMinute bounds the adds, removals and checks of one
	// account's domains a minute, the API and the site page together.
	domainActionsPerMinute = 10
	// dnsQuestionsPerMinute bounds the DNS questions the server asks a
	// minute for custom domains, whoever asks (checks, the job, the
	// server's own addresses).
	dnsQuestionsPerMinute = 600
	// dnsQuestionsPerCheck is what a check reserves of them before it
	// starts, so that one refused is refused before anything changes:
	// TXT, CNAME, A and AAAA of the domain, the site host's A and AAAA,
	// and a CNAME link or two. A check that asks more takes them from
	// the budget as it asks.
	dnsQuestionsPerCheck = 8
)

// dnsBudgetKey is the one key of the server-wide DNS budget.
const dnsBudgetKey = ""

// msgDomainLimit is the refusal over the plan's custom domains.
const msgDomainLimit = "Custom domain limit reached (%d on the %s plan). Remove a domain or upgrade your plan."

// msgDomainNotFound answers a domain the deployment does not have.
const msgDomainNotFound = "Domain not found"

// domainJSON is a custom domain as the API shows it.
type domainJSON struct {
	Domain     string           `json:"domain"`
	Status     string           `json:"status"`
	Reason     string           `json:"reason,omitempty"`
	Records    []domains.Record `json:"records"`
	URL        string           `json:"url"`
	CreatedAt  string           `json:"created_at"`
	CheckedAt  string           `json:"checked_at,omitempty"`
	VerifiedAt string           `json:"verified_at,omitempty"`
}

// startDomainAction counts an add, removal or check of the domains of
// the account owner against its limit and, for one that checks DNS,
// reserves the check's questions from the server's budget. Over either
// limit it returns the 429 (Retry-After set on e's response) before
// anything changes, and nothing is counted. The caller ends the check
// with the allowance's done (nil when dns is false).
func (sd *sitedrop) startDomainAction(e *core.RequestEvent, owner string, dns bool) (*dnsAllowance, error) {
	if err := sd.domainActions.check(e.Response, owner); err != nil {
		return nil, err
	}
	if !dns {
		return nil, nil
	}
	if err := sd.dnsQuestions.checkN(e.Response, dnsBudgetKey, dnsQuestionsPerCheck, msgRateLimited); err != nil {
		sd.domainActions.Refund(owner, 1)
		return nil, err
	}
	return &dnsAllowance{budget: sd.dnsQuestions, reserved: dnsQuestionsPerCheck}, nil
}

// dnsAllowance is one check's share of the server's DNS questions: some
// reserved before it starts, any more taken from the budget as they are
// asked. done gives back what it did not use.
type dnsAllowance struct {
	budget *limiter
	mu     sync.Mutex
	// reserved is what is left of the reservation.
	reserved int
}

// reserveDNS is the allowance of a check that no request waits for (the
// job): false when the budget has no room for one.
func (sd *sitedrop) reserveDNS() (*dnsAllowance, bool) {
	if ok, _ := sd.dnsQuestions.AllowN(dnsBudgetKey, dnsQuestionsPerCheck, time.Now()); !ok {
		return nil, false
	}
	return &dnsAllowance{budget: sd.dnsQuestions, reserved: dnsQuestionsPerCheck}, true
}

// allow counts one question (Checker.Allow): from the reservation while
// it lasts, then from the budget.
func (a *dnsAllowance) allow() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.reserved > 0 {
		a.reserved--
		return true
	}
	ok, _ := a.budget.AllowN(dnsBudgetKey, 1, time.Now())
	return ok
}

// done gives back the reserved questions the check did not ask.
func (a *dnsAllowance) done() {
	if a == nil {
		return
	}
	a.mu.Lock()
	n := a.reserved
	a.reserved = 0
	a.mu.Unlock()
	if n > 0 {
		a.budget.Refund(dnsBudgetKey, n)
	}
}

// parsePublicIPs reads --public-ip.
func parsePublicIPs(list []string) ([]netip.Addr, error) {
	var out []netip.Addr
	for _, s := range list {
		a, err := netip.ParseAddr(strings.TrimSpace(s))
		if err != nil {
			return nil, fmt.Errorf("--public-ip %q: not an IP address", s)
		}
		out = append(out, a.Unmap())
	}
	return out, nil
}

// domainChecker verifies custom domains through --dns-resolvers, else the
// system's resolvers, each question counted by a's allow (nil: by the
// server's budget alone). It is built on use: the serve flags are parsed
// after the app bootstraps.
func (sd *sitedrop) domainChecker(a *dnsAllowance) *domains.Checker {
	allow := func() bool {
		ok, _ := sd.dnsQuestions.AllowN(dnsBudgetKey, 1, time.Now())
		return ok
	}
	if a != nil {
		allow = a.allow
	}
	return &domains.Checker{Resolvers: sd.cfg.Serve.DNSResolvers, Allow: allow}
}

// domainLimit is the custom domains the plan allows.
func (sd *sitedrop) domainLimit(plan string) int {
	if plan == sites.PlanPro {
		return sd.cfg.DomainsPro
	}
	return sd.cfg.DomainsFree
}

// domainRules are the server's own names, refused as custom domains.
func (sd *sitedrop) domainRules() domains.Rules {
	web, sitesDomain := sd.hosts.Domains()
	return domains.Rules{WebHost: web, SitesDomain: sitesDomain}
}

// addDomain claims raw for dep (owned by user) and checks it at once,
// within a (startDomainAction's). It returns the record and whether it is
// new; an existing claim of the same deployment is checked again (a
// failed one from the start). Refusals are *apiError: 400 not a domain or
// one of the server's, 409 verified on another site, 403 over the plan's
// limit.
func (sd *sitedrop) addDomain(ctx context.Context, user, dep *core.Record, raw string, a *dnsAllowance) (*core.Record, bool, error) {
	name, err := domains.Normalize(raw)
	if err != nil {
		return nil, false, fail(http.StatusBadRequest, "%s", err.Error())
	}
	if err := sd.domainRules().Check(name); err != nil {
		return nil, false, fail(http.StatusBadRequest, "%s", err.Error())
	}
	var rec *core.Record
	created := false
	err = sd.app.RunInTransaction(func(tx core.App) error {
		if existing, err := domains.Find(tx, dep.Id, name); err == nil {
			rec = existing
			if err := domains.Reset(tx, rec); errors.Is(err, domains.ErrTaken) {
				return fail(http.StatusConflict, "%s", err.Error())
			} else if err != nil {
				return err
			}
			return nil
		}
		n, err := domains.CountOwned(tx, user.Id)
		if err != nil {
			return err
		}
		plan := user.GetString("plan")
		if limit := sd.domainLimit(plan); n >= limit {
			return fail(http.StatusForbidden, msgDomainLimit, limit, planName(plan))
		}
		rec, err = domains.Add(tx, dep.Id, name)
		if errors.Is(err, domains.ErrTaken) {
			return fail(http.StatusConflict, "%s", err.Error())
		}
		created = err == nil
		return err
	})
	if err != nil {
		return nil, false, err
	}
	rec, err = sd.checkDomain(ctx, rec, dep.GetString("slug"), a)
	return rec, created, err
}

// findDomain is the claim of domain raw (as a path names it) by the
// deployment with depID; an error when raw is not a domain or the
// deployment has no such claim.
func findDomain(app core.App, depID, raw string) (*core.Record, error) {
	name, err := domains.Normalize(raw)
	if err != nil {
		return nil, err
	}
	return domains.Find(app, depID, name)
}

// recheckDomain is "check now" of rec, a domain of the site slug: a
// failed claim starts again (domains.ErrTaken when another site has
// verified the domain since), then it is checked within a. It returns the
// saved record.
func (sd *sitedrop) recheckDomain(ctx context.Context, app core.App, rec *core.Record, slug string, a *dnsAllowance) (*core.Record, error) {
	if err := domains.Reset(app, rec); err != nil {
		return nil, err
	}
	return sd.checkDomain(ctx, rec, slug, a)
}

// planName is the plan as people read it.
func planName(plan string) string {
	if plan == "" {
		return sites.PlanFree
	}
	return plan
}

// checkDomain verifies rec's DNS records now, its questions counted by a,
// and saves the outcome; a verified domain is not checked again. It
// returns the saved record.
func (sd *sitedrop) checkDomain(ctx context.Context, rec *core.Record, slug string, a *dnsAllowance) (*core.Record, error) {
	if rec.GetString("status") == domains.StatusVerified {
		return rec, nil
	}
	ctx, cancel := context.WithTimeout(ctx, domainCheckTimeout)
	defer cancel()
	host := sd.siteHost(slug)
	checker := sd.domainChecker(a)
	addrs, err := sd.serverAddrs(ctx, host, checker)
	if err == nil {
		err = checker.Verify(ctx, rec.GetString("domain"), rec.GetString("token"), host, addrs)
	}
	saved, serr := domains.Result(sd.app, rec, err, time.Now().UTC())
	if serr != nil {
		return nil, serr
	}
	return saved, nil
}

// serverAddrs are the server's public addresses: --public-ip, else the
// addresses of the site's own host (the target of a custom domain's
// CNAME resolves to the server), looked up with c at most every
// serverAddrsTTL.
func (sd *sitedrop) serverAddrs(ctx context.Context, siteHost string, c *domains.Checker) ([]netip.Addr, error) {
	if len(sd.publicIPs) > 0 {
		return sd.publicIPs, nil
	}
	return sd.hostAddrs.get(ctx, siteHost, time.Now(), c.LookupAddrs)
}

// domainAnswer is rec as the API shows it, with the records to create.
func (sd *sitedrop) domainAnswer(ctx context.Context, rec *core.Record, slug string) domainJSON {
	name, host := rec.GetString("domain"), sd.siteHost(slug)
	var addrs []netip.Addr
	if domains.IsApex(name) {
		addrs, _ = sd.serverAddrs(ctx, host, sd.domainChecker(nil)) // none known: no A/AAAA records to show
	}
	return domainJSON{
		Domain:     name,
		Status:     rec.GetString("status"),
		Reason:     rec.GetString("reason"),
		Records:    domains.Records(name, rec.GetString("token"), host, addrs),
		URL:        sd.siteHostURL(name),
		CreatedAt:  timestamp(rec.GetDateTime("created").Time()),
		CheckedAt:  optTimestamp(rec.GetDateTime("checked").Time()),
		VerifiedAt: optTimestamp(rec.GetDateTime("verified").Time()),
	}
}

// optTimestamp is timestamp, or "" for the zero time.
func optTimestamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return timestamp(t)
}
