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
		Storage:         roughBytes(u.StorageBytes),
		VersionsPerSite: u.Limits.VersionsPerSite,
		PageViews:       strconv.FormatInt(u.PageViews, 10),
		BytesServed:     roughBytes(u.BytesServed),
		Days:            usage.Days,
		Since:           u.Since.Format(time.DateOnly),
	}
}

// roughBytes is n as people read a size: bytes below 1 KiB, else the
// largest binary unit with one decimal ("1.5 MiB").
func roughBytes(n int64) string {
	if n < 1<<10 {
		if n == 1 {
			return "1 byte"
		}
		return fmt.Sprintf("%d bytes", n)
	}
	units := []string{"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	v, i := float64(n)/(1<<10), 0
	for v >= 1<<10 && i < len(units)-1 {
		v /= 1 << 10
		i++
	}
	return strconv.FormatFloat(v, 'f', 1, 64) + " " + units[i]
}
