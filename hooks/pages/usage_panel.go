package pages

import (
	"fmt"
	"strconv"
	"time"

	"sitedrop/sites/usage"
	"sitedrop/ui"
)

// usagePanel is an account's usage as its account page shows it.
func usagePanel(u usage.Account) *ui.AccountUsage {
	return &ui.AccountUsage{
		Sites:           fmt.Sprintf("%d of %d", u.Sites, u.Limits.Sites),
		Storage:         ui.SizeShort(u.StorageBytes),
		VersionsPerSite: u.Limits.VersionsPerSite,
		PageViews:       strconv.FormatInt(u.PageViews, 10),
		BytesServed:     ui.SizeShort(u.BytesServed),
		Days:            usage.Days,
		Since:           u.Since.Format(time.DateOnly),
	}
}
