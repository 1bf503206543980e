package pages

import (
	"testing"
	"time"

	"github.com/pocketbase/pocketbase/core"

	"sitedrop/sites"
	"sitedrop/ui"
)

// TestSiteState is the list's badge rule: disabled wins, then an expiry,
// then live; nothing live is "Not deployed". A paused site is "Paused",
// after disabled and before an expiry.
func TestSiteState(t *testing.T) {
	col := core.NewBaseCollection(sites.DeploymentsCollection)
	col.Fields.Add(&core.TextField{Name: sites.FieldStatus}, &core.DateField{Name: sites.FieldExpiresAt},
		&core.TextField{Name: sites.FieldLiveVersion}, &core.BoolField{Name: sites.FieldPaused})
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	dep := func(status string, expires time.Time, live string) *sites.Deployment {
		d := sites.DeploymentOf(core.NewRecord(col))
		d.SetStatus(status)
		d.SetExpiresAt(expires)
		d.SetLiveVersion(live)
		return d
	}
	paused := func(d *sites.Deployment) *sites.Deployment { d.SetPaused(true); return d }
	takenDown := func(d *sites.Deployment) *sites.Deployment { d.Set(sites.FieldTakedownReason, "spam"); return d }
	for _, c := range []struct {
		name  string
		d     *sites.Deployment
		state ui.SiteState
		text  string
	}{
		{"live", dep(sites.StatusActive, time.Time{}, "v1"), ui.SiteLive, "Live"},
		{"disabled", dep("disabled", time.Time{}, "v1"), ui.SiteDisabled, "Disabled by an admin"},
		{"disabled wins over an expiry", dep("disabled", now.Add(time.Hour), "v1"), ui.SiteDisabled, "Disabled by an admin"},
		{"expiring in hours", dep(sites.StatusActive, now.Add(5*time.Hour+10*time.Minute), "v1"), ui.SiteExpiring, "Expiring in 5 hours"},
		{"expiring in minutes", dep(sites.StatusActive, now.Add(20*time.Minute), "v1"), ui.SiteExpiring, "Expiring in 20 minutes"},
		{"expiring in days", dep(sites.StatusActive, now.Add(72*time.Hour), "v1"), ui.SiteExpiring, "Expiring in 3 days"},
		{"expired, not yet purged", dep(sites.StatusActive, now.Add(-time.Minute), "v1"), ui.SiteExpiring, "Expired"},
		{"nothing live", dep(sites.StatusActive, time.Time{}, ""), ui.SiteNotDeployed, "Not deployed"},
		{"paused", paused(dep(sites.StatusActive, time.Time{}, "v1")), ui.SitePaused, "Paused"},
		{"paused wins over an expiry", paused(dep(sites.StatusActive, now.Add(time.Hour), "v1")), ui.SitePaused, "Paused"},
		{"disabled wins over paused", paused(dep("disabled", time.Time{}, "v1")), ui.SiteDisabled, "Disabled by an admin"},
		{"taken down wins over disabled and paused", takenDown(paused(dep("disabled", time.Time{}, "v1"))), ui.SiteTakenDown, "Taken down by an admin"},
		{"taken down wins over an expiry", takenDown(dep(sites.StatusActive, now.Add(time.Hour), "v1")), ui.SiteTakenDown, "Taken down by an admin"},
	} {
		if state, text := siteListState(c.d, now); state != c.state || text != c.text {
			t.Errorf("%s: %q %q, want %q %q", c.name, state, text, c.state, c.text)
		}
	}
}

// TestDeployedAge is the list's "Deployed … ago" rule.
func TestDeployedAge(t *testing.T) {
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		at         time.Time
		stamp, ago string
	}{
		{time.Time{}, "", ""},
		{now.Add(-20 * time.Second), "2026-11-26T11:59:40Z", "just now"},
		{now.Add(-3*time.Hour - 5*time.Minute), "2026-11-26T08:55:00Z", "3 hours ago"},
		{now.Add(-50 * time.Hour), "2026-11-24T10:00:00Z", "2 days ago"},
	} {
		if stamp, ago := deployedAge(c.at, now); stamp != c.stamp || ago != c.ago {
			t.Errorf("%v: %q %q, want %q %q", c.at, stamp, ago, c.stamp, c.ago)
		}
	}
}
