package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"sitedrop/sites/client"
	"sitedrop/sites/safetext"
)

// newRenameCommand is `sitedrop rename ID SLUG`: the deployment's new
// slug; its old address redirects to the new one for 30 days.
func newRenameCommand() *cobra.Command {
	return keyedCommand("rename ID SLUG", "Give a deployment a new slug; its old address redirects there for 30 days", cobra.ExactArgs(2),
		func(c *cobra.Command, api *client.Client, args []string) error {
			ans, err := api.Rename(args[0], args[1])
			if err != nil {
				return err
			}
			out := c.OutOrStdout()
			if ans.PreviousURL == "" {
				fmt.Fprintf(out, "%s already has that slug: %s\n", safetext.Escape(ans.ID), safetext.Escape(ans.URL))
				return nil
			}
			fmt.Fprintf(out, "Renamed: %s\n%s redirects there until %s\n",
				safetext.Escape(ans.URL), safetext.Escape(ans.PreviousURL), safetext.Escape(ans.RedirectUntil))
			return nil
		})
}

// newPauseCommand is `sitedrop pause ID` (on) or `sitedrop resume ID`.
func newPauseCommand(on bool) *cobra.Command {
	use, short := "resume ID", "Serve a paused deployment again"
	if on {
		use, short = "pause ID", "Pause a deployment: visitors see a \"paused\" page (503) and forms refuse posts until resume"
	}
	return keyedCommand(use, short, cobra.ExactArgs(1),
		func(c *cobra.Command, api *client.Client, args []string) error {
			ans, err := api.SetPaused(args[0], on)
			if err != nil {
				return err
			}
			state := "Running"
			if ans.Paused {
				state = "Paused"
			}
			fmt.Fprintf(c.OutOrStdout(), "%s: %s\n", state, safetext.Escape(ans.URL))
			return nil
		})
}
