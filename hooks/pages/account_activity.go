package pages

import (
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/pocketbase/pocketbase/core"

	"sitedrop/sites/audit"
	"sitedrop/ui"
)

// activityPerPage is how many entries the activity page shows at a time.
const activityPerPage = 50

// maxActivityPage bounds the page number a client may ask for, so that a
// made-up ?page= never asks the database for a huge offset.
const maxActivityPage = 1000

// accountActivity is GET /account/activity: the audit log's entries about
// the user's things, newest first, a page (?page=N) at a time.
func (a *accountPages) accountActivity(e *core.RequestEvent) error {
	user := userOf(e)
	page := 1
	if q := e.Request.URL.Query().Get("page"); q != "" {
		n, err := strconv.Atoi(q)
		if err != nil || n < 1 || n > maxActivityPage {
			return a.sessions.errorPage(e, http.StatusBadRequest, "Bad request",
				fmt.Sprintf("The page must be a number from 1 to %d.", maxActivityPage))
		}
		page = n
	}
	p, err := audit.ListOwned(e.App, user.Id, page, activityPerPage)
	if err != nil {
		return err
	}
	now := time.Now()
	props := ui.AccountActivityProps{Page: page}
	for _, it := range p.Items {
		props.Entries = append(props.Entries, ui.ActivityEntry{
			At:   it.At.UTC().Format(time.RFC3339),
			Ago:  ui.Ago(now, it.At),
			What: activityText(it),
			Who:  activityWho(it, user.Id),
			IP:   it.IP,
		})
	}
	if page > 1 {
		props.Newer = "/account/activity?page=" + strconv.Itoa(page-1)
	}
	if p.More && page < maxActivityPage {
		props.Older = "/account/activity?page=" + strconv.Itoa(page+1)
	}
	return Render(e, http.StatusOK, ui.AccountActivity(a.sessions.layout(e, user), props))
}

// activityWho names who acted, as the owner (userID) reads it.
func activityWho(it audit.Item, userID string) string {
	switch {
	case it.ActorKind == audit.KindUser && it.Actor == userID:
		return "You"
	case it.ActorKind == audit.KindUser:
		return "Another account"
	case it.ActorKind == audit.KindSuperuser:
		return "An administrator"
	case it.ActorKind == audit.KindAnonymous:
		return "Anonymous"
	}
	return "sitedrop"
}

// activityText says what an entry records, in a sentence.
func activityText(it audit.Item) string {
	d := func(k string) string {
		switch v := it.Details[k].(type) {
		case string:
			return v
		case float64:
			return strconv.FormatFloat(v, 'f', -1, 64)
		}
		return ""
	}
	slug := d("slug")
	switch it.Action {
	case audit.ActionDeploy:
		return "Deployed " + slug
	case audit.ActionUpdate:
		return "Deployed version " + d("version") + " of " + slug
	case audit.ActionDelete:
		return "Deleted " + slug
	case audit.ActionRollback:
		return "Rolled " + slug + " back from version " + d("from") + " to " + d("to")
	case audit.ActionPromote:
		return "Promoted version " + d("to") + " of " + slug
	case audit.ActionProtect:
		return "Changed the protection of " + slug
	case audit.ActionRename:
		return "Renamed " + d("from") + " to " + d("to")
	case audit.ActionPause:
		return "Paused " + slug
	case audit.ActionResume:
		return "Resumed " + slug
	case audit.ActionClaim:
		return "Claimed " + slug
	case audit.ActionDomainAdd:
		return "Added the domain " + d("domain")
	case audit.ActionDomainRemove:
		return "Removed the domain " + d("domain")
	case audit.ActionKeyCreate:
		return "Created the API key " + d("name") + " (" + d("prefix") + "…)"
	case audit.ActionKeyRevoke:
		return "Revoked the API key " + d("name") + " (" + d("prefix") + "…)"
	case audit.ActionWebhookCreate:
		return "Added a webhook to " + d("host")
	case audit.ActionWebhookDelete:
		return "Removed the webhook to " + d("host")
	case audit.ActionTakedown:
		return "Took down " + slug
	case audit.ActionRestore:
		return "Restored " + slug
	}
	return it.Action + " " + it.TargetKind + " " + it.Target
}
