package sites

import (
	"database/sql"
	"errors"
	"fmt"
	"hash/fnv"
	"time"

	"github.com/pocketbase/dbx"
	"github.com/pocketbase/pocketbase/core"

	"sitedrop/sites/accounts"
)

// CheckSlot returns ErrSlotLimit when saving rec would give its owner more
// deployments than the owner's plan allows. It must run inside the
// transaction that saves rec, so that concurrent creates and claims are
// counted one after the other.
func (s *Service) CheckSlot(tx core.App, rec *core.Record) error {
	owner := rec.GetString(FieldOwner)
	if owner == "" {
		return nil
	}
	if !rec.IsNew() && rec.Original().GetString(FieldOwner) == owner {
		return nil
	}
	plan, n, err := s.slotsOf(tx, owner, rec.Id)
	if err != nil {
		return err
	}
	if n >= s.SlotLimit(plan) {
		return ErrSlotLimit
	}
	return nil
}

// slotCountsTable holds each account's number of deployments (columns
// owner, n), kept by triggers on the deployments table (migration
// 1763802200_slot_counts): every writer is counted, in its own
// transaction.
const slotCountsTable = "_sitedrop_slots"

// ownedCountSQL is the number of deployments of the account bound as
// {:owner}: its slotCountsTable row, 0 without one.
const ownedCountSQL = "COALESCE((SELECT [[n]] FROM {{" + slotCountsTable + "}} WHERE [[owner]] = {:owner}), 0)"

// slotsOf reads the plan of the account owner and its number of
// deployments other than id, in one statement (a deploy's transaction
// runs it: each statement less is a deploy's CPU less). The number is
// the owner's row of slotCountsTable, one index lookup whatever the
// account's sites: counting the owner's index entries instead grew with
// them (about a seventh of a one-page deploy's CPU at 1,500 sites, in
// each of a deploy's two checks). The row of id is subtracted when it is
// the owner's (a claim's record is saved with its new owner). An unknown
// owner is an error.
func (s *Service) slotsOf(tx core.App, owner, id string) (plan string, n int, err error) {
	var r struct {
		Plan string `db:"plan"`
		N    int    `db:"n"`
		Self int    `db:"self"`
	}
	err = tx.DB().NewQuery("SELECT u.[[" + accounts.FieldPlan + "]] AS plan, " +
		ownedCountSQL + " AS n, " +
		"(SELECT COUNT(*) FROM {{" + DeploymentsCollection + "}} WHERE [[id]] = {:id} AND [[owner]] = {:owner}) AS self " +
		"FROM {{" + accounts.UsersCollection + "}} u WHERE u.[[id]] = {:owner}").
		Bind(dbx.Params{"owner": owner, "id": id}).One(&r)
	if err != nil {
		return "", 0, fmt.Errorf("find owner %s and count its deployments: %w", owner, err)
	}
	return r.Plan, r.N - r.Self, nil
}

// ownedCount is how many deployments owner has (ownedCountSQL).
func ownedCount(app core.App, owner string) (int, error) {
	var n int
	err := app.DB().NewQuery("SELECT " + ownedCountSQL).
		Bind(dbx.Params{"owner": owner}).Row(&n)
	if err != nil {
		return 0, fmt.Errorf("count the sites of %s: %w", owner, err)
	}
	return n, nil
}

// PrecheckCreate tells whether a deployment for owner (nil: anonymous)
// with slug ("" generates one) would be refused for its slug or for the
// owner's slots, from the current state. Handlers call it before reading
// content, so a refused deploy costs little; Create calls it before it
// writes any content, and its transaction checks for good. A database
// error is an error of the precheck (the deploy is refused, not let
// through to the transaction), as is an owner the database lacks.
func (s *Service) PrecheckCreate(owner *core.Record, slug string) error {
	if slug != "" {
		if err := ValidateSlug(slug); err != nil {
			return err
		}
		if s.IsReserved(slug) {
			return ErrSlugReserved
		}
	}
	if owner == nil && slug == "" {
		return nil // an anonymous deploy's generated slug: nothing to ask
	}
	ownerID := ""
	if owner != nil {
		ownerID = owner.Id
	}
	// One statement tells whether the slug has a deployment or a kept
	// old slug, and the account's plan and sites: a deploy's usual case
	// (a free slug, room left) is settled by it. A slug found is judged
	// by the exact checks below (an expired anonymous site gives it up, an
	// expired redirect does not keep it).
	var r struct {
		Taken bool           `db:"taken"`
		Kept  bool           `db:"kept"`
		Plan  sql.NullString `db:"plan"` // NULL: no such owner
		N     int            `db:"n"`
	}
	err := s.app.DB().NewQuery("SELECT " +
		"EXISTS(SELECT 1 FROM {{" + DeploymentsCollection + "}} WHERE [[" + FieldSlug + "]] = {:slug}) AS taken, " +
		"EXISTS(SELECT 1 FROM {{" + SlugRedirectsCollection + "}} WHERE [[" + FieldRedirectSlug + "]] = {:slug}) AS kept, " +
		"(SELECT [[" + accounts.FieldPlan + "]] FROM {{" + accounts.UsersCollection + "}} WHERE [[id]] = {:owner}) AS plan, " +
		ownedCountSQL + " AS n").
		Bind(dbx.Params{"slug": slug, "owner": ownerID}).One(&r)
	if err != nil {
		return fmt.Errorf("precheck slug %q and the sites of %q: %w", slug, ownerID, err)
	}
	if slug != "" {
		if r.Taken {
			if rec, err := s.app.FindFirstRecordByData(DeploymentsCollection, FieldSlug, slug); err == nil && !slugGivenUp(rec, time.Now()) {
				return ErrSlugTaken
			}
		}
		if r.Kept && slugKept(s.app, slug, "", time.Now()) {
			return ErrSlugTaken // a renamed site's old slug, still redirecting
		}
	}
	if owner == nil {
		return nil
	}
	if !r.Plan.Valid {
		return fmt.Errorf("find owner %s and count its deployments: %w", ownerID, sql.ErrNoRows)
	}
	if r.N >= s.SlotLimit(r.Plan.String) {
		return ErrSlotLimit
	}
	return nil
}

// lockDeployment serialises replaces of one deployment and returns the
// unlock function. Locks are striped: unrelated deployments rarely share one.
func (s *Service) lockDeployment(id string) func() {
	h := fnv.New32a()
	h.Write([]byte(id))
	mu := &s.deployLocks[h.Sum32()%uint32(len(s.deployLocks))]
	mu.Lock()
	return mu.Unlock
}

// takeSlug makes sure no deployment has slug inside tx. An anonymous
// deployment that has expired but is not yet purged gives its slug up at
// once. A renamed site's kept old slug is the record hooks' check
// (FollowRename), in the same transaction.
func (s *Service) takeSlug(tx core.App, slug string, now time.Time) error {
	rec, err := tx.FindFirstRecordByData(DeploymentsCollection, FieldSlug, slug)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("look up slug %s: %w", slug, err)
	}
	if slugGivenUp(rec, now) {
		if err := tx.Delete(rec); err != nil {
			return fmt.Errorf("purge expired %s: %w", slug, err)
		}
		return nil
	}
	return ErrSlugTaken
}

// slugGivenUp reports whether the deployment rec, which holds a slug,
// gives it up to a new deploy: an anonymous deployment past its expiry
// (the new deploy deletes it, in its transaction).
func slugGivenUp(rec *core.Record, now time.Time) bool {
	d := DeploymentOf(rec)
	return d.OwnerID() == "" && d.Expired(now)
}

func (s *Service) generateFreeSlug(tx core.App) (string, error) {
	for range 20 {
		slug := GenerateSlug()
		if s.IsReserved(slug) {
			continue
		}
		if _, err := tx.FindFirstRecordByData(DeploymentsCollection, FieldSlug, slug); err != nil && !slugKept(tx, slug, "", time.Now()) {
			return slug, nil
		}
	}
	return "", errors.New("no free slug found after 20 tries")
}
