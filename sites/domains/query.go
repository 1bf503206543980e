package domains

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/pocketbase/dbx"
	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tools/security"

	"sitedrop/sites"
)

// The queries of the domains collection (PocketBase's core/otp_query.go
// idiom): one row per claim of a domain by a deployment.
// A domain may be claimed (pending) by several deployments, but verified
// on one at a time (a unique index on domain where status is verified);
// the first to verify wins and the others' claims fail.

// MaxPending is how long a claim stays pending before it fails.
const MaxPending = 72 * time.Hour

// Reasons of failed claims.
const (
	ReasonTakenElsewhere = "verified by another site"
	reasonExpired        = "not verified within 72 hours: "
)

// Errors of the queries.
var (
	// ErrTaken: the domain is verified on another deployment.
	ErrTaken = errors.New("this domain is verified on another site")
	// ErrExists: the deployment already has this domain.
	ErrExists = errors.New("this site already has this domain")
	// ErrNotFound: the deployment has no claim of this domain.
	ErrNotFound = errors.New("domain not found")
)

// Backoff is the wait before the next check of a pending claim after
// attempts checks since the claim started (added, or started again). The
// backoff is the claim's own: a new claim never waits on another's. The
// check made when it starts (by the request that adds it, at once) is
// followed by the job's next run, whenever that is; then the waits double
// from a minute, at most an hour: 0, 1, 2, 4 … 60 minutes.
func Backoff(attempts int) time.Duration {
	if attempts <= 1 {
		return 0
	}
	return min(time.Minute<<min(attempts-2, 6), time.Hour)
}

// Add saves a pending claim of domain (normalised, checked) by the
// deployment, with a new token. It returns ErrTaken when another
// deployment has it verified, and ErrExists, with the existing record,
// when this one already claimed it. app may be a transaction. ctx is the
// caller's request (the audit log names who added the domain from it).
func Add(ctx context.Context, app core.App, deploymentID, domain string) (*Domain, error) {
	mine, err := Find(app, deploymentID, domain)
	if err == nil {
		return mine, ErrExists
	}
	if taken, err := verifiedElsewhere(app, deploymentID, domain); err != nil {
		return nil, err
	} else if taken {
		return nil, ErrTaken
	}
	col, err := app.FindCachedCollectionByNameOrId(Collection)
	if err != nil {
		return nil, fmt.Errorf("find %s: %w", Collection, err)
	}
	rec := newDomain(col)
	rec.SetName(domain)
	rec.SetDeploymentID(deploymentID)
	rec.SetStatus(StatusPending)
	rec.SetToken("sitedrop-verify-" + security.RandomString(32))
	rec.SetAttempts(0)
	rec.SetSince(time.Now().UTC())
	if err := app.SaveWithContext(context.WithoutCancel(ctx), rec); err != nil {
		return nil, fmt.Errorf("save domain %s: %w", domain, err)
	}
	return rec, nil
}

// Find returns the deployment's claim of domain (normalised); an error
// wrapping ErrNotFound when it has none.
func Find(app core.App, deploymentID, domain string) (*Domain, error) {
	rec, err := app.FindFirstRecordByFilter(Collection, fieldDeployment+" = {:d} && "+fieldDomain+" = {:n}",
		dbx.Params{"d": deploymentID, "n": domain})
	if errors.Is(err, sql.ErrNoRows) {
		err = ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("find domain %s of %s: %w", domain, deploymentID, err)
	}
	return asDomain(rec), nil
}

// List returns the deployment's domains, oldest first.
func List(app core.App, deploymentID string) ([]*Domain, error) {
	recs, err := app.FindRecordsByFilter(Collection, fieldDeployment+" = {:d}", fieldCreated+",id", 0, 0,
		dbx.Params{"d": deploymentID})
	if err != nil {
		return nil, fmt.Errorf("list domains of %s: %w", deploymentID, err)
	}
	return asDomains(recs), nil
}

// CountOwned counts the domains, whatever their state, of every
// deployment owned by the user (the plan limit's count).
func CountOwned(app core.App, userID string) (int, error) {
	var n int
	err := app.DB().Select("COUNT(*)").From(Collection+" d").
		InnerJoin(sites.DeploymentsCollection+" p", dbx.NewExp("p.id = d."+fieldDeployment)).
		Where(dbx.HashExp{"p." + sites.FieldOwner: userID}).Row(&n)
	if err != nil {
		return 0, fmt.Errorf("count domains of %s: %w", userID, err)
	}
	return n, nil
}

// VerifiedHosts returns the verified domains of a deployment, sorted: the
// extra hosts it is served at.
func VerifiedHosts(app core.App, deploymentID string) ([]string, error) {
	recs, err := app.FindRecordsByFilter(Collection, fieldDeployment+" = {:d} && "+fieldStatus+" = {:s}", fieldDomain, 0, 0,
		dbx.Params{"d": deploymentID, "s": StatusVerified})
	if err != nil {
		return nil, fmt.Errorf("verified domains of %s: %w", deploymentID, err)
	}
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = asDomain(r).Name()
	}
	slices.Sort(out)
	return out, nil
}

// Due returns the pending claims whose next check is due at now (see
// Backoff), at most limit.
func Due(app core.App, now time.Time, limit int) ([]*Domain, error) {
	recs, err := app.FindRecordsByFilter(Collection, fieldStatus+" = {:s}", fieldChecked+",id", 0, 0,
		dbx.Params{"s": StatusPending})
	if err != nil {
		return nil, fmt.Errorf("pending domains: %w", err)
	}
	var out []*Domain
	for _, r := range asDomains(recs) {
		checked := r.Checked()
		if checked.IsZero() || !now.Before(checked.Add(Backoff(r.Attempts()))) {
			out = append(out, r)
			if len(out) == limit {
				break
			}
		}
	}
	return out, nil
}

// Result saves the outcome of a check of rec (nil: verified) at now. A
// verified claim fails the other deployments' pending claims of the
// domain; a claim that another deployment verified first fails; a pending
// claim older than MaxPending fails with the last reason. Verified
// claims are not checked again (a check that fails leaves one as it is).
// It returns the saved record.
func Result(app core.App, rec *Domain, checkErr error, now time.Time) (*Domain, error) {
	var out *Domain
	err := app.RunInTransaction(func(tx core.App) error {
		found, err := tx.FindRecordById(Collection, rec.Id)
		if err != nil {
			return fmt.Errorf("reload domain %s: %w", rec.Id, err)
		}
		fresh := asDomain(found)
		domain, dep := fresh.Name(), fresh.DeploymentID()
		fresh.SetChecked(now)
		fresh.SetAttempts(fresh.Attempts() + 1)
		taken, err := verifiedElsewhere(tx, dep, domain)
		if err != nil {
			return err
		}
		switch {
		case taken:
			fresh.SetStatus(StatusFailed)
			fresh.SetReason(ReasonTakenElsewhere)
		case fresh.Status() == StatusVerified:
			// stays verified: serving does not hang on DNS once proven
		case checkErr == nil:
			fresh.SetStatus(StatusVerified)
			fresh.SetReason("")
			fresh.SetVerified(now)
		default:
			reason := checkErr.Error()
			var ce *CheckError
			if !errors.As(checkErr, &ce) {
				reason = "the check failed: " + reason
			}
			fresh.SetReason(reason)
			if now.Sub(pendingSince(fresh)) >= MaxPending {
				fresh.SetStatus(StatusFailed)
				fresh.SetReason(reasonExpired + reason)
			}
		}
		if err := tx.Save(fresh); err != nil {
			return fmt.Errorf("save domain %s: %w", domain, err)
		}
		if fresh.Status() == StatusVerified {
			if err := failOtherClaims(tx, dep, domain, now); err != nil {
				return err
			}
		}
		out = fresh
		return nil
	})
	return out, err
}

// Reset puts a failed claim back to pending, so it is checked again (and
// has MaxPending again, from now). It returns ErrTaken, and changes
// nothing, when another deployment has the domain verified.
func Reset(app core.App, rec *Domain) error {
	if rec.Status() != StatusFailed {
		return nil
	}
	if taken, err := verifiedElsewhere(app, rec.DeploymentID(), rec.Name()); err != nil {
		return err
	} else if taken {
		return ErrTaken
	}
	rec.SetStatus(StatusPending)
	rec.SetAttempts(0)
	rec.clearChecked()
	rec.SetSince(time.Now().UTC())
	if err := app.Save(rec); err != nil {
		return fmt.Errorf("reset domain %s: %w", rec.Name(), err)
	}
	return nil
}

// Delete removes the claim: the deployment no longer answers at its
// domain (the record hooks drop the route and the certificate). ctx is
// the caller's request (the audit log names who removed it from it).
func Delete(ctx context.Context, app core.App, rec *Domain) error {
	if err := app.DeleteWithContext(context.WithoutCancel(ctx), rec); err != nil {
		return fmt.Errorf("remove domain %s: %w", rec.Name(), err)
	}
	return nil
}

// pendingSince is when rec's claim (or its last reset) started.
func pendingSince(rec *Domain) time.Time {
	if t := rec.Since(); !t.IsZero() {
		return t
	}
	return rec.Created()
}

// verifiedElsewhere reports whether another deployment has domain
// verified.
func verifiedElsewhere(app core.App, deploymentID, domain string) (bool, error) {
	n, err := app.CountRecords(Collection, dbx.HashExp{fieldDomain: domain, fieldStatus: StatusVerified},
		dbx.Not(dbx.HashExp{fieldDeployment: deploymentID}))
	if err != nil {
		return false, fmt.Errorf("find verified %s: %w", domain, err)
	}
	return n > 0, nil
}

// failOtherClaims fails the other deployments' pending claims of domain.
func failOtherClaims(tx core.App, deploymentID, domain string, now time.Time) error {
	others, err := tx.FindRecordsByFilter(Collection,
		fieldDomain+" = {:n} && "+fieldDeployment+" != {:d} && "+fieldStatus+" = {:s}", "", 0, 0,
		dbx.Params{"n": domain, "d": deploymentID, "s": StatusPending})
	if err != nil {
		return fmt.Errorf("find other claims of %s: %w", domain, err)
	}
	for _, o := range asDomains(others) {
		o.SetStatus(StatusFailed)
		o.SetReason(ReasonTakenElsewhere)
		o.SetChecked(now)
		if err := tx.Save(o); err != nil {
			return fmt.Errorf("fail claim %s of %s: %w", o.Id, domain, err)
		}
	}
	return nil
}

// findSite is the deployment with id; an error when it is gone.
func findSite(app core.App, id string) (Site, error) {
	rec, err := app.FindRecordById(sites.DeploymentsCollection, id)
	if err != nil {
		return Site{}, fmt.Errorf("find deployment %s: %w", id, err)
	}
	return SiteOf(rec), nil
}

// routeRow is one claim with its deployment's slug: a row of the route
// table.
type routeRow struct {
	Domain     string `db:"domain"`
	Deployment string `db:"deployment"`
	Status     string `db:"status"`
	Slug       string `db:"slug"`
}

// routeRows reads every claim with its deployment's slug.
func routeRows(app core.App) ([]routeRow, error) {
	var rows []routeRow
	err := app.DB().Select("d."+fieldDomain+" AS domain", "d."+fieldDeployment+" AS deployment",
		"d."+fieldStatus+" AS status", "p."+sites.FieldSlug+" AS slug").
		From(Collection+" d").
		InnerJoin(sites.DeploymentsCollection+" p", dbx.NewExp("p.id = d."+fieldDeployment)).
		All(&rows)
	if err != nil {
		return nil, fmt.Errorf("load custom domains: %w", err)
	}
	return rows, nil
}
