package hooks

import (
	"github.com/pocketbase/pocketbase/core"

	"sitedrop/sites"
	"sitedrop/ui"
)

// dropProps configures a page's drop zone (ui.DropDeploy): a new site for
// user (anonymous when nil), or a re-deploy of deploymentID, within the
// server's limits. The zone's script calls the API with the session
// cookie (see accounts.Sessions.PageUser).
func dropProps(cfg *Config, heading string, user *core.Record, deploymentID string) ui.DropProps {
	return ui.DropProps{
		Heading:     heading,
		DeployID:    deploymentID,
		Owner:       user != nil,
		MaxFiles:    cfg.MaxFiles,
		MaxBody:     cfg.MaxBody,
		MaxBodyText: sites.FormatBytes(cfg.MaxBody),
	}
}
