package audit

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/pocketbase/dbx"
	"github.com/pocketbase/pocketbase/core"
)

// Item is one entry of the log as read back.
type Item struct {
	ID         string
	At         time.Time
	Actor      string
	ActorKind  string
	IP         string
	Action     string
	TargetKind string
	Target     string
	Details    map[string]any
}

// itemOf reads rec, an audit_log record.
func itemOf(rec *core.Record) Item {
	it := Item{
		ID:         rec.Id,
		At:         rec.GetDateTime(FieldCreated).Time(),
		Actor:      rec.GetString(FieldActor),
		ActorKind:  rec.GetString(FieldActorKind),
		IP:         rec.GetString(FieldIP),
		Action:     rec.GetString(FieldAction),
		TargetKind: rec.GetString(FieldTargetKind),
		Target:     rec.GetString(FieldTarget),
	}
	_ = json.Unmarshal([]byte(rec.GetString(FieldDetails)), &it.Details)
	return it
}

// Page is one page of an owner's entries, newest first.
type Page struct {
	Items []Item
	// Page is the 1-based page number; More tells whether a next page
	// exists.
	Page int
	More bool
}

// ListOwned returns page (1-based) of the entries about ownerID's things,
// perPage at a time, newest first.
func ListOwned(app core.App, ownerID string, page, perPage int) (Page, error) {
	if page < 1 {
		page = 1
	}
	if perPage < 1 {
		perPage = 50
	}
	// one more than a page tells whether there is a next one
	recs, err := app.FindRecordsByFilter(Collection, FieldOwner+" = {:owner}",
		"-"+FieldCreated+",-id", perPage+1, (page-1)*perPage, dbx.Params{"owner": ownerID})
	if err != nil {
		return Page{}, fmt.Errorf("audit: list entries of %s: %w", ownerID, err)
	}
	p := Page{Page: page, More: len(recs) > perPage}
	if p.More {
		recs = recs[:perPage]
	}
	for _, r := range recs {
		p.Items = append(p.Items, itemOf(r))
	}
	return p, nil
}
