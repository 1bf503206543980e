package domains

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"sync"
	"time"

	"github.com/pocketbase/pocketbase/core"

	"sitedrop/sites"
	"sitedrop/sites/ratelimit"
)

// CheckTimeout bounds one verification (all its DNS lookups).
const CheckTimeout = 15 * time.Second

// The server's budget of DNS questions (in memory: each server counts
// its own). It is a rule of the check, not of a route: the job's checks,
// which no request waits for, spend it as the API's and the pages' do.
const (
	// DNSQuestionsPerMinute bounds the DNS questions the server asks a
	// minute for custom domains, whoever asks (checks, the job, the
	// server's own addresses).
	DNSQuestionsPerMinute = 600
	// DNSQuestionsPerCheck is what a check reserves of them before it
	// starts, so that one refused is refused before anything changes:
	// TXT, CNAME, A and AAAA of the domain, the site host's A and AAAA,
	// and a CNAME link or two. A check that asks more takes them from
	// the budget as it asks.
	DNSQuestionsPerCheck = 8
	// DNSBudgetKey is the one key of the budget's limiter.
	DNSBudgetKey = ""
)

// LimitError refuses a claim over the plan's custom domains.
type LimitError struct {
	// Limit is the plan's number of domains, Plan the plan as people
	// read it ("free", "pro").
	Limit int
	Plan  string
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("custom domain limit reached (%d on the %s plan)", e.Limit, e.Plan)
}

// BudgetError refuses a check when the server's DNS budget has no room
// for it; RetryAfter is when it will.
type BudgetError struct {
	RetryAfter time.Duration
}

func (e *BudgetError) Error() string {
	return fmt.Sprintf("the DNS question budget is spent (room again in %s)", e.RetryAfter)
}

// NameRefusal returns the refusal of the name itself that err is or
// wraps (one of Normalize's errors, or ErrReserved), nil when it is none.
func NameRefusal(err error) error {
	for _, e := range []error{ErrEmpty, ErrIP, ErrTooLong, ErrNotDomain, ErrSuffix, ErrReserved} {
		if errors.Is(err, e) {
			return e
		}
	}
	return nil
}

// PlanName is plan as people read it ("" is the free plan).
func PlanName(plan string) string {
	if plan == "" {
		return sites.PlanFree
	}
	return plan
}

// The custom domains each plan allows by default (Config's FreeLimit and
// ProLimit, which NewService fills in when zero).
const (
	DefaultFreeLimit = 1
	DefaultProLimit  = 10
)

// Config is what a Service needs of the server.
type Config struct {
	// FreeLimit and ProLimit are the custom domains each plan allows
	// (counting every deployment of the account).
	FreeLimit, ProLimit int
	// Rules are the server's own names, which no domain may take.
	Rules Rules
	// PublicIPs are the server's public addresses (--public-ip); when
	// empty, those the site's own host resolves to.
	PublicIPs []netip.Addr
	// Resolvers returns the DNS servers to ask (--dns-resolvers; none:
	// the system's). It is called on each check: the serve flags are
	// parsed after the service is built.
	Resolvers func() []string
	// SiteHost is the host of a slug's site, <slug>.<sites-domain>:
	// what a domain's CNAME points at.
	SiteHost func(slug string) string
}

// Service adds, checks and removes custom domains with the plan limits
// and the server's DNS budget. It is safe for concurrent use.
type Service struct {
	app   core.App
	cfg   Config
	dns   *ratelimit.Limiter
	addrs addrCache
}

// NewService is the custom domains service of app.
func NewService(app core.App, cfg Config) *Service {
	if cfg.FreeLimit <= 0 {
		cfg.FreeLimit = DefaultFreeLimit
	}
	if cfg.ProLimit <= 0 {
		cfg.ProLimit = DefaultProLimit
	}
	return &Service{app: app, cfg: cfg, dns: ratelimit.New(DNSQuestionsPerMinute, time.Minute)}
}

// Limit is the custom domains plan allows.
func (s *Service) Limit(plan string) int {
	if plan == sites.PlanPro {
		return s.cfg.ProLimit
	}
	return s.cfg.FreeLimit
}

// DNSBudget is the server's budget of DNS questions (one key,
// DNSBudgetKey).
func (s *Service) DNSBudget() *ratelimit.Limiter { return s.dns }

// Allowance is one check's share of the server's DNS questions: some
// reserved before it starts, any more taken from the budget as they are
// asked. Done gives back what it did not use.
type Allowance struct {
	budget *ratelimit.Limiter
	mu     sync.Mutex
	// reserved is what is left of the reservation.
	reserved int
}

// Reserve takes a check's reservation (DNSQuestionsPerCheck) from the
// budget at now, or returns a *BudgetError and takes nothing.
func (s *Service) Reserve(now time.Time) (*Allowance, error) {
	if ok, wait := s.dns.AllowN(DNSBudgetKey, DNSQuestionsPerCheck, now); !ok {
		return nil, &BudgetError{RetryAfter: wait}
	}
	return &Allowance{budget: s.dns, reserved: DNSQuestionsPerCheck}, nil
}

// Start begins an account's action on its domains (an add, removal or
// check): it counts one action of owner on actions (a limit per account)
// and, for one that checks DNS (dns), reserves the check's questions from
// the server's budget (Reserve). Over either limit it returns a
// *ratelimit.Error (the budget's with its RetryAfter) before anything
// changes, and nothing is counted. The caller ends the check with the
// allowance's Done (nil when dns is false).
func (s *Service) Start(actions *ratelimit.Limiter, owner string, dns bool) (*Allowance, error) {
	if err := actions.Check(owner); err != nil {
		return nil, err
	}
	if !dns {
		return nil, nil
	}
	a, err := s.Reserve(time.Now())
	if err != nil {
		actions.Refund(owner, 1)
		var be *BudgetError
		if errors.As(err, &be) {
			return nil, &ratelimit.Error{RetryAfter: be.RetryAfter}
		}
		return nil, err
	}
	return a, nil
}

// allow counts one question (Checker.Allow): from the reservation while
// it lasts, then from the budget.
func (a *Allowance) allow() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.reserved > 0 {
		a.reserved--
		return true
	}
	ok, _ := a.budget.AllowN(DNSBudgetKey, 1, time.Now())
	return ok
}

// Done gives back the reserved questions the check did not ask. A nil
// Allowance does nothing.
func (a *Allowance) Done() {
	if a == nil {
		return
	}
	a.mu.Lock()
	n := a.reserved
	a.reserved = 0
	a.mu.Unlock()
	if n > 0 {
		a.budget.Refund(DNSBudgetKey, n)
	}
}

// checker verifies custom domains through the configured resolvers,
// each question counted by a (nil: by the server's budget alone).
func (s *Service) checker(a *Allowance) *Checker {
	allow := func() bool {
		ok, _ := s.dns.AllowN(DNSBudgetKey, 1, time.Now())
		return ok
	}
	if a != nil {
		allow = a.allow
	}
	var resolvers []string
	if s.cfg.Resolvers != nil {
		resolvers = s.cfg.Resolvers()
	}
	return &Checker{Resolvers: resolvers, Allow: allow}
}

// Add claims raw for site (owned by acct) and checks it at once, within
// a (Reserve's). It returns the claim and whether it is new; an existing
// claim of the same deployment is checked again (a failed one from the
// start). Refusals: Normalize's errors and ErrReserved (not a domain, or
// one of the server's), ErrTaken (verified on another site), *LimitError
// (over the plan's limit); nothing changes then.
func (s *Service) Add(ctx context.Context, acct Account, site Site, raw string, a *Allowance) (*Domain, bool, error) {
	name, err := Normalize(raw)
	if err != nil {
		return nil, false, err
	}
	if err := s.cfg.Rules.Check(name); err != nil {
		return nil, false, err
	}
	var rec *Domain
	created := false
	err = s.app.RunInTransaction(func(tx core.App) error {
		if existing, err := Find(tx, site.ID, name); err == nil {
			rec = existing
			return Reset(tx, rec)
		}
		n, err := CountOwned(tx, acct.ID)
		if err != nil {
			return err
		}
		if limit := s.Limit(acct.Plan); n >= limit {
			return &LimitError{Limit: limit, Plan: PlanName(acct.Plan)}
		}
		rec, err = Add(ctx, tx, site.ID, name)
		created = err == nil
		return err
	})
	if err != nil {
		return nil, false, err
	}
	rec, err = s.check(ctx, rec, site.Slug, a)
	return rec, created, err
}

// Lookup is the claim of domain raw (as a path names it) by the
// deployment with depID: ErrNotFound when raw is not a domain or the
// deployment has no such claim.
func (s *Service) Lookup(depID, raw string) (*Domain, error) {
	name, err := Normalize(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNotFound, err)
	}
	return Find(s.app, depID, name)
}

// List returns the deployment's domains, oldest first.
func (s *Service) List(depID string) ([]*Domain, error) { return List(s.app, depID) }

// Used counts the custom domains of every deployment of the account.
func (s *Service) Used(acct Account) (int, error) { return CountOwned(s.app, acct.ID) }

// Remove releases the claim rec: its site no longer answers there. ctx is
// the caller's request (see Delete).
func (s *Service) Remove(ctx context.Context, rec *Domain) error { return Delete(ctx, s.app, rec) }

// Recheck is "check now" of rec, a domain of the site slug: a failed
// claim starts again (ErrTaken, and nothing changes, when another site
// has verified the domain since), then it is checked within a. It
// returns the saved claim.
func (s *Service) Recheck(ctx context.Context, rec *Domain, slug string, a *Allowance) (*Domain, error) {
	if err := Reset(s.app, rec); err != nil {
		return nil, err
	}
	return s.check(ctx, rec, slug, a)
}

// check verifies rec's DNS records now, its questions counted by a, and
// saves the outcome; a verified domain is not checked again. It returns
// the saved claim.
func (s *Service) check(ctx context.Context, rec *Domain, slug string, a *Allowance) (*Domain, error) {
	if rec.Status() == StatusVerified {
		return rec, nil
	}
	ctx, cancel := context.WithTimeout(ctx, CheckTimeout)
	defer cancel()
	host := s.cfg.SiteHost(slug)
	c := s.checker(a)
	addrs, err := s.serverAddrs(ctx, host, c)
	if err == nil {
		err = c.Verify(ctx, rec.Name(), rec.Token(), host, addrs)
	}
	return Result(s.app, rec, err, time.Now().UTC())
}

// serverAddrs are the server's public addresses: PublicIPs, else the
// addresses of the site's own host (the target of a custom domain's
// CNAME resolves to the server), looked up with c at most every
// serverAddrsTTL.
func (s *Service) serverAddrs(ctx context.Context, siteHost string, c *Checker) ([]netip.Addr, error) {
	if len(s.cfg.PublicIPs) > 0 {
		return s.cfg.PublicIPs, nil
	}
	return s.addrs.get(ctx, siteHost, time.Now(), c.LookupAddrs)
}

// Records are the DNS records rec's owner creates to point its domain at
// the site slug (see the package's Records); an apex's A/AAAA records
// are the server's addresses, none when they are not known.
func (s *Service) Records(ctx context.Context, rec *Domain, slug string) []Record {
	name, host := rec.Name(), s.cfg.SiteHost(slug)
	var addrs []netip.Addr
	if IsApex(name) {
		addrs, _ = s.serverAddrs(ctx, host, s.checker(nil)) // none known: no A/AAAA records to show
	}
	return Records(name, rec.Token(), host, addrs)
}

// CheckDue checks the pending claims that are due, at most limit, each
// within a reservation of the DNS budget; when the budget is spent the
// rest wait for a later run. It logs what it did to the app's logger.
func (s *Service) CheckDue(ctx context.Context, limit int) {
	log := s.app.Logger()
	due, err := Due(s.app, time.Now().UTC(), limit)
	if err != nil {
		log.Error("find pending domains", "error", err)
		return
	}
	for i, rec := range due {
		site, err := findSite(s.app, rec.DeploymentID())
		if err != nil {
			continue // deleted meanwhile: its domains went with it
		}
		a, err := s.Reserve(time.Now())
		if err != nil { // the server's DNS budget is spent: the rest wait for a later run
			log.Warn("custom domain checks postponed: DNS question budget spent", "postponed", len(due)-i)
			return
		}
		saved, err := s.check(ctx, rec, site.Slug, a)
		a.Done()
		if err != nil {
			log.Error("check custom domain", "domain", rec.Name(), "error", err)
			continue
		}
		if st := saved.Status(); st != StatusPending {
			log.Info("custom domain checked", "domain", saved.Name(), "status", st, "reason", saved.Reason())
		}
	}
}
