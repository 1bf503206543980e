package domains

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/pocketbase/dbx"
	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tools/security"

	"sitedrop/sites"
)

// The domains collection: one row per claim of a domain by a deployment.
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

// Errors of Add.
var (
	// ErrTaken: the domain is verified on another deployment.
	ErrTaken = errors.New("this domain is verified on another site")
	// ErrExists: the deployment already has this domain.
	ErrExists = errors.New("this site already has this domain")
)

// Backoff is the wait before the next check of a pending claim after
// attempts checks: a minute, doubling, at most an hour.
func Backoff(attempts int) time.Duration {
	if attempts < 1 {
		return 0
	}
	d := time.Minute << min(attempts-1, 6)
	return min(d, time.Hour)
}

// Add saves a pending claim of domain (normalised, checked) by the
// deployment, with a new token. It returns ErrTaken when another
// deployment has it verified, and ErrExists, with the existing record,
// when this one already claimed it. app may be a transaction.
func Add(app core.App, deploymentID, domain string) (*core.Record, error) {
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
	rec := core.NewRecord(col)
	rec.Set("domain", domain)
	rec.Set("deployment", deploymentID)
	rec.Set("status", StatusPending)
	rec.Set("token", "sitedrop-verify-"+security.RandomString(32))
	rec.Set("attempts", 0)
	rec.Set("since", time.Now().UTC())
	if err := app.Save(rec); err != nil {
		return nil, fmt.Errorf("save domain %s: %w", domain, err)
	}
	return rec, nil
}

// Find returns the deployment's claim of domain.
func Find(app core.App, deploymentID, domain string) (*core.Record, error) {
	rec, err := app.FindFirstRecordByFilter(Collection, "deployment = {:d} && domain = {:n}",
		dbx.Params{"d": deploymentID, "n": domain})
	if err != nil {
		return nil, fmt.Errorf("find domain %s of %s: %w", domain, deploymentID, err)
	}
	return rec, nil
}

// List returns the deployment's domains, oldest first.
func List(app core.App, deploymentID string) ([]*core.Record, error) {
	recs, err := app.FindRecordsByFilter(Collection, "deployment = {:d}", "created,id", 0, 0, dbx.Params{"d": deploymentID})
	if err != nil {
		return nil, fmt.Errorf("list domains of %s: %w", deploymentID, err)
	}
	return recs, nil
}

// CountOwned counts the domains, whatever their state, of every
// deployment owned by the user (the plan limit's count).
func CountOwned(app core.App, userID string) (int, error) {
	var n int
	err := app.DB().Select("COUNT(*)").From(Collection+" d").
		InnerJoin(sites.DeploymentsCollection+" p", dbx.NewExp("p.id = d.deployment")).
		Where(dbx.HashExp{"p.owner": userID}).Row(&n)
	if err != nil {
		return 0, fmt.Errorf("count domains of %s: %w", userID, err)
	}
	return n, nil
}

// VerifiedHosts returns the verified domains of a deployment, sorted: the
// extra hosts it is served at.
func VerifiedHosts(app core.App, deploymentID string) ([]string, error) {
	recs, err := app.FindRecordsByFilter(Collection, "deployment = {:d} && status = {:s}", "domain", 0, 0,
		dbx.Params{"d": deploymentID, "s": StatusVerified})
	if err != nil {
		return nil, fmt.Errorf("verified domains of %s: %w", deploymentID, err)
	}
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = r.GetString("domain")
	}
	slices.Sort(out)
	return out, nil
}

// Due returns the pending claims whose next check is due at now (see
// Backoff), at most limit.
func Due(app core.App, now time.Time, limit int) ([]*core.Record, error) {
	recs, err := app.FindRecordsByFilter(Collection, "status = {:s}", "checked,id", 0, 0, dbx.Params{"s": StatusPending})
	if err != nil {
		return nil, fmt.Errorf("pending domains: %w", err)
	}
	var out []*core.Record
	for _, r := range recs {
		checked := r.GetDateTime("checked").Time()
		if checked.IsZero() || !now.Before(checked.Add(Backoff(r.GetInt("attempts")))) {
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
func Result(app core.App, rec *core.Record, checkErr error, now time.Time) (*core.Record, error) {
	var out *core.Record
	err := app.RunInTransaction(func(tx core.App) error {
		fresh, err := tx.FindRecordById(Collection, rec.Id)
		if err != nil {
			return fmt.Errorf("reload domain %s: %w", rec.Id, err)
		}
		domain, dep := fresh.GetString("domain"), fresh.GetString("deployment")
		fresh.Set("checked", now)
		fresh.Set("attempts", fresh.GetInt("attempts")+1)
		taken, err := verifiedElsewhere(tx, dep, domain)
		if err != nil {
			return err
		}
		switch {
		case taken:
			fresh.Set("status", StatusFailed)
			fresh.Set("reason", ReasonTakenElsewhere)
		case fresh.GetString("status") == StatusVerified:
			// stays verified: serving does not hang on DNS once proven
		case checkErr == nil:
			fresh.Set("status", StatusVerified)
			fresh.Set("reason", "")
			fresh.Set("verified", now)
		default:
			reason := checkErr.Error()
			var ce *CheckError
			if !errors.As(checkErr, &ce) {
				reason = "the check failed: " + reason
			}
			fresh.Set("reason", reason)
			if now.Sub(pendingSince(fresh)) >= MaxPending {
				fresh.Set("status", StatusFailed)
				fresh.Set("reason", reasonExpired+reason)
			}
		}
		if err := tx.Save(fresh); err != nil {
			return fmt.Errorf("save domain %s: %w", domain, err)
		}
		if fresh.GetString("status") == StatusVerified {
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
func Reset(app core.App, rec *core.Record) error {
	if rec.GetString("status") != StatusFailed {
		return nil
	}
	if taken, err := verifiedElsewhere(app, rec.GetString("deployment"), rec.GetString("domain")); err != nil {
		return err
	} else if taken {
		return ErrTaken
	}
	rec.Set("status", StatusPending)
	rec.Set("attempts", 0)
	rec.Set("checked", "")
	rec.Set("since", time.Now().UTC())
	if err := app.Save(rec); err != nil {
		return fmt.Errorf("reset domain %s: %w", rec.GetString("domain"), err)
	}
	return nil
}

// pendingSince is when rec's claim (or its last reset) started.
func pendingSince(rec *core.Record) time.Time {
	if t := rec.GetDateTime("since").Time(); !t.IsZero() {
		return t
	}
	return rec.GetDateTime("created").Time()
}

// verifiedElsewhere reports whether another deployment has domain
// verified.
func verifiedElsewhere(app core.App, deploymentID, domain string) (bool, error) {
	n, err := app.CountRecords(Collection, dbx.HashExp{"domain": domain, "status": StatusVerified},
		dbx.Not(dbx.HashExp{"deployment": deploymentID}))
	if err != nil {
		return false, fmt.Errorf("find verified %s: %w", domain, err)
	}
	return n > 0, nil
}

// failOtherClaims fails the other deployments' pending claims of domain.
func failOtherClaims(tx core.App, deploymentID, domain string, now time.Time) error {
	others, err := tx.FindRecordsByFilter(Collection, "domain = {:n} && deployment != {:d} && status = {:s}", "", 0, 0,
		dbx.Params{"n": domain, "d": deploymentID, "s": StatusPending})
	if err != nil {
		return fmt.Errorf("find other claims of %s: %w", domain, err)
	}
	for _, o := range others {
		o.Set("status", StatusFailed)
		o.Set("reason", ReasonTakenElsewhere)
		o.Set("checked", now)
		if err := tx.Save(o); err != nil {
			return fmt.Errorf("fail claim %s of %s: %w", o.Id, domain, err)
		}
	}
	return nil
}
