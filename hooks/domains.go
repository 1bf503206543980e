package hooks

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"github.com/pocketbase/pocketbase/core"

	"sitedrop/sites"
	"sitedrop/sites/domains"
)

// What the API and the site page share about custom domains: adding one
// (with the plan limit), checking it, and the answer that lists it.

// domainCheckTimeout bounds one verification (all its DNS lookups).
const domainCheckTimeout = 15 * time.Second

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
// system's resolvers. It is built on use: the serve flags are parsed after
// the app bootstraps.
func (sd *sitedrop) domainChecker() *domains.Checker {
	return &domains.Checker{Resolvers: sd.cfg.Serve.DNSResolvers}
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

// addDomain claims raw for dep (owned by user) and checks it at once. It
// returns the record and whether it is new; an existing claim of the same
// deployment is checked again (a failed one from the start). Refusals are
// *apiError: 400 not a domain or one of the server's, 409 verified on
// another site, 403 over the plan's limit.
func (sd *sitedrop) addDomain(ctx context.Context, user, dep *core.Record, raw string) (*core.Record, bool, error) {
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
	rec, err = sd.checkDomain(ctx, rec, dep.GetString("slug"))
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
// verified the domain since), then it is checked. It returns the saved
// record.
func (sd *sitedrop) recheckDomain(ctx context.Context, app core.App, rec *core.Record, slug string) (*core.Record, error) {
	if err := domains.Reset(app, rec); err != nil {
		return nil, err
	}
	return sd.checkDomain(ctx, rec, slug)
}

// planName is the plan as people read it.
func planName(plan string) string {
	if plan == "" {
		return sites.PlanFree
	}
	return plan
}

// checkDomain verifies rec's DNS records now and saves the outcome; a
// verified domain is not checked again. It returns the saved record.
func (sd *sitedrop) checkDomain(ctx context.Context, rec *core.Record, slug string) (*core.Record, error) {
	if rec.GetString("status") == domains.StatusVerified {
		return rec, nil
	}
	ctx, cancel := context.WithTimeout(ctx, domainCheckTimeout)
	defer cancel()
	host := sd.siteHost(slug)
	addrs, err := sd.serverAddrs(ctx, host)
	if err == nil {
		err = sd.domainChecker().Verify(ctx, rec.GetString("domain"), rec.GetString("token"), host, addrs)
	}
	saved, serr := domains.Result(sd.app, rec, err, time.Now().UTC())
	if serr != nil {
		return nil, serr
	}
	return saved, nil
}

// serverAddrs are the server's public addresses: --public-ip, else the
// addresses of the site's own host (the target of a custom domain's
// CNAME resolves to the server), looked up at most every serverAddrsTTL.
func (sd *sitedrop) serverAddrs(ctx context.Context, siteHost string) ([]netip.Addr, error) {
	if len(sd.publicIPs) > 0 {
		return sd.publicIPs, nil
	}
	return sd.hostAddrs.get(ctx, siteHost, time.Now(), sd.domainChecker().LookupAddrs)
}

// domainAnswer is rec as the API shows it, with the records to create.
func (sd *sitedrop) domainAnswer(ctx context.Context, rec *core.Record, slug string) domainJSON {
	name, host := rec.GetString("domain"), sd.siteHost(slug)
	var addrs []netip.Addr
	if domains.IsApex(name) {
		addrs, _ = sd.serverAddrs(ctx, host) // none known: no A/AAAA records to show
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
