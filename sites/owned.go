package sites

import (
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/pocketbase/dbx"
	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tools/types"
)

// The orders an owner's site list can be sorted in (OwnedQuery.Sort).
const (
	// SortDeployed puts the most recently deployed site first: the one
	// whose live version is the newest; sites without one come last.
	SortDeployed = "deployed"
	// SortName orders by what the list shows, the title or else the
	// slug, case-insensitively.
	SortName = "name"
	// SortCreated puts the newest site first.
	SortCreated = "created"
)

// SortOrders are the valid OwnedQuery.Sort values, the default first.
var SortOrders = []string{SortDeployed, SortName, SortCreated}

// MaxSearchLen bounds a site search (characters).
const MaxSearchLen = 100

// ErrSearchTooLong refuses a search longer than MaxSearchLen.
var ErrSearchTooLong = fmt.Errorf("a search has at most %d characters", MaxSearchLen)

// OwnedQuery selects and orders an owner's sites for their list.
type OwnedQuery struct {
	// Search keeps the sites whose slug or title contains it, ignoring
	// case; "" keeps all. At most MaxSearchLen characters.
	Search string
	// Sort is one of SortOrders; "" is SortDeployed.
	Sort string
}

// OwnedSite is one site of an owner's list.
type OwnedSite struct {
	*Deployment
	// DeployedAt is when the live version was deployed; zero when the
	// site has no live version.
	DeployedAt time.Time
}

// ListOwnedSites returns owner's sites that q selects, in q's order. An
// unknown Sort is SortDeployed; a Search too long is ErrSearchTooLong.
func (s *Service) ListOwnedSites(ownerID string, q OwnedQuery) ([]OwnedSite, error) {
	search := strings.TrimSpace(q.Search)
	if utf8.RuneCountInString(search) > MaxSearchLen {
		return nil, ErrSearchTooLong
	}
	// the live version's creation, in SQL for the order
	deployed := "(SELECT [[v." + FieldVersionCreated + "]] FROM {{" + VersionsCollection + "}} v WHERE [[v.id]] = [[" +
		DeploymentsCollection + "." + FieldLiveVersion + "]])"
	query := s.app.RecordQuery(DeploymentsCollection).
		AndWhere(dbx.HashExp{DeploymentsCollection + "." + FieldOwner: ownerID})
	if search != "" {
		// LIKE with its wildcards escaped: "%" and "_" are characters
		// (dbx.Like escapes them without SQLite's ESCAPE clause)
		pattern := "%" + strings.NewReplacer(`\`, `\\`, "%", `\%`, "_", `\_`).Replace(search) + "%"
		query.AndWhere(dbx.NewExp("([["+DeploymentsCollection+"."+FieldSlug+"]] LIKE {:search} ESCAPE '\\' OR [["+
			DeploymentsCollection+"."+FieldTitle+"]] LIKE {:search} ESCAPE '\\')", dbx.Params{"search": pattern}))
	}
	switch q.Sort {
	case SortName:
		query.OrderBy("LOWER(COALESCE(NULLIF([["+DeploymentsCollection+"."+FieldTitle+"]], ''), [["+
			DeploymentsCollection+"."+FieldSlug+"]])) ASC", DeploymentsCollection+"."+FieldSlug+" ASC")
	case SortCreated:
		query.OrderBy(DeploymentsCollection+"."+FieldCreated+" DESC", DeploymentsCollection+".id DESC")
	default:
		query.OrderBy(deployed+" DESC", DeploymentsCollection+"."+FieldCreated+" DESC", DeploymentsCollection+".id DESC")
	}
	var recs []*core.Record
	if err := query.All(&recs); err != nil {
		return nil, fmt.Errorf("list the sites of %s: %w", ownerID, err)
	}
	live := make([]any, 0, len(recs))
	for _, r := range recs {
		if id := r.GetString(FieldLiveVersion); id != "" {
			live = append(live, id)
		}
	}
	created := map[string]time.Time{}
	if len(live) > 0 {
		var rows []struct {
			ID      string `db:"id"`
			Created string `db:"created"`
		}
		err := s.app.DB().Select("id", FieldVersionCreated+" AS created").From(VersionsCollection).
			Where(dbx.In("id", live...)).All(&rows)
		if err != nil {
			return nil, fmt.Errorf("find the live versions of %s: %w", ownerID, err)
		}
		for _, r := range rows {
			if t, err := types.ParseDateTime(r.Created); err == nil {
				created[r.ID] = t.Time()
			}
		}
	}
	out := make([]OwnedSite, len(recs))
	for i, r := range recs {
		out[i] = OwnedSite{Deployment: DeploymentOf(r), DeployedAt: created[r.GetString(FieldLiveVersion)]}
	}
	return out, nil
}

// CountOwned is how many sites ownerID has.
func (s *Service) CountOwned(ownerID string) (int, error) { return ownedCount(s.app, ownerID) }

// DeleteOwned deletes every site of ownerID through app (a transaction,
// when the account closes): each goes offline at once and takes its
// versions, aliases, domains, submissions, webhooks and analytics with
// it, as a single site's deletion does (the record hooks and the cascade),
// and its content is left to the collector.
func DeleteOwned(app core.App, ownerID string) error {
	if ownerID == "" {
		return errors.New("delete owned sites: no owner")
	}
	recs, err := app.FindAllRecords(DeploymentsCollection, dbx.HashExp{FieldOwner: ownerID})
	if err != nil {
		return fmt.Errorf("find the sites of %s: %w", ownerID, err)
	}
	for _, r := range recs {
		if err := app.Delete(r); err != nil {
			return fmt.Errorf("delete site %s of %s: %w", r.GetString(FieldSlug), ownerID, err)
		}
	}
	return nil
}
