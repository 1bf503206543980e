package migrations

import (
	"fmt"

	"github.com/pocketbase/pocketbase/core"
	m "github.com/pocketbase/pocketbase/migrations"
)

// The blocklist (issue 31): what an admin refuses on a public instance.
// kind says what value is: a file's sha256 (content_hash; a deploy or an
// upload holding it is refused), a host or URL pattern (redirect_target;
// a _redirects rule pointing there is refused) or an e-mail domain
// (email_domain; no new account from it). note says why, created_by is
// the e-mail of the superuser who added it (text, as a takedown's
// taken_down_by: a relation to _superusers shows N/A in the dashboard). Superuser-only, like every collection: the
// admin API and the dashboard edit it, and record hooks check and
// normalise value for both.
func init() {
	m.Register(func(app core.App) error {
		c := core.NewBaseCollection("blocklist")
		c.Fields.Add(
			&core.SelectField{Name: "kind", Required: true, MaxSelect: 1,
				Values: []string{"content_hash", "redirect_target", "email_domain"}},
			&core.TextField{Name: "value", Required: true, Max: 2048, Presentable: true},
			&core.TextField{Name: "note", Max: 500},
			&core.TextField{Name: "created_by", Max: 255}, // the superuser's e-mail, as taken_down_by
			&core.AutodateField{Name: "created", OnCreate: true},
		)
		c.AddIndex("idx_blocklist_kind_value", true, "kind, value", "")
		if err := app.Save(c); err != nil {
			return fmt.Errorf("save blocklist: %w", err)
		}
		return nil
	}, func(app core.App) error {
		c, err := app.FindCollectionByNameOrId("blocklist")
		if err != nil {
			return nil
		}
		return app.Delete(c)
	})
}
