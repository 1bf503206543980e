package cli

import (
	"bufio"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"

	"sitedrop/sites/client"
	"sitedrop/sites/safetext"

	"github.com/spf13/cobra"
)

// clientCommand builds a client command with --server and --key, whose
// run gets the resolved API client.
func clientCommand(use, short string, args cobra.PositionalArgs, run func(c *cobra.Command, api *client.Client, args []string) error) *cobra.Command {
	var server, key string
	c := &cobra.Command{
		Use:          use,
		Short:        short,
		Args:         args,
		SilenceUsage: true,
		Annotations:  map[string]string{NoBootstrapAnnotation: "true"},
		RunE: func(c *cobra.Command, a []string) error {
			api, err := newAPIClient(server, key)
			if err != nil {
				return err
			}
			return shown(run(c, api, a))
		},
	}
	clientFlags(c, &server, &key)
	return c
}

// keyedCommand is a clientCommand that needs an API key: without one it
// says how to get one instead of answering with the server's 401.
func keyedCommand(use, short string, args cobra.PositionalArgs, run func(c *cobra.Command, api *client.Client, args []string) error) *cobra.Command {
	return clientCommand(use, short, args, func(c *cobra.Command, api *client.Client, a []string) error {
		if api.Key == "" {
			return errNoKey
		}
		return run(c, api, a)
	})
}

// errNoKey is the error of a command that needs a key and has none.
var errNoKey = errors.New("this needs an API key: run sitedrop login, or give --key or SITEDROP_KEY")

// newLoginCommand is `sitedrop login [EMAIL]`: signs in with an e-mail
// code and saves the key it gets.
func newLoginCommand() *cobra.Command {
	return clientCommand("login [EMAIL]", "Sign in with a code sent by e-mail and save the API key (mode 0600)", cobra.MaximumNArgs(1),
		func(c *cobra.Command, api *client.Client, args []string) error {
			in := bufio.NewReader(c.InOrStdin())
			email := ""
			if len(args) == 1 {
				email = args[0]
			} else {
				fmt.Fprint(c.ErrOrStderr(), "E-mail: ")
				line, _ := in.ReadString('\n')
				email = strings.TrimSpace(line)
			}
			api.Key = "" // a login starts from nothing
			otpID, err := api.RequestCode(email)
			if err != nil {
				return err
			}
			fmt.Fprintf(c.ErrOrStderr(), "A code was sent to %s. Code: ", email)
			line, _ := in.ReadString('\n')
			key, err := api.Verify(otpID, strings.TrimSpace(line))
			if err != nil {
				return err
			}
			p, err := saveCredentials(credentials{Server: api.Server, Key: key})
			if err != nil {
				return err
			}
			fmt.Fprintf(c.OutOrStdout(), "Signed in to %s; the key is saved in %s\n", api.Server, p)
			return nil
		})
}

// newListCommand is `sitedrop ls`.
func newListCommand() *cobra.Command {
	return keyedCommand("ls", "List your deployments", cobra.NoArgs,
		func(c *cobra.Command, api *client.Client, _ []string) error {
			deployments, err := api.List()
			if err != nil {
				return err
			}
			w := tabwriter.NewWriter(c.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "ID\tSLUG\tURL\tUPDATED\tTITLE")
			for _, d := range deployments {
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", safetext.Escape(d.ID), safetext.Escape(d.Slug), safetext.Escape(d.URL), safetext.Escape(d.UpdatedAt), safetext.Escape(d.Title))
			}
			return w.Flush()
		})
}

// newRemoveCommand is `sitedrop rm ID`.
func newRemoveCommand() *cobra.Command {
	return keyedCommand("rm ID", "Delete a deployment (its site goes offline at once)", cobra.ExactArgs(1),
		func(c *cobra.Command, api *client.Client, args []string) error {
			msg, err := api.Delete(args[0])
			if err != nil {
				return err
			}
			fmt.Fprintln(c.OutOrStdout(), safetext.Escape(msg))
			return nil
		})
}

// newVersionsCommand is `sitedrop versions ID`: each kept version with
// its preview URL, aliases and message.
func newVersionsCommand() *cobra.Command {
	return keyedCommand("versions ID", "List a deployment's kept versions, newest first, with their preview URLs, aliases and messages", cobra.ExactArgs(1),
		func(c *cobra.Command, api *client.Client, args []string) error {
			versions, err := api.Versions(args[0])
			if err != nil {
				return err
			}
			w := tabwriter.NewWriter(c.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "VERSION\tCREATED\tFILES\tBYTES\tLIVE\tALIASES\tPREVIEW\tMESSAGE")
			for _, v := range versions {
				live := ""
				if v.Live {
					live = "live"
				}
				fmt.Fprintf(w, "%d\t%s\t%d\t%d\t%s\t%s\t%s\t%s\n", v.Version, safetext.Escape(v.CreatedAt), v.FileCount, v.TotalBytes, live,
					orDash(safetext.Escape(strings.Join(v.Aliases, ","))), orDash(safetext.Escape(v.PreviewURL)), safetext.Escape(v.Message))
			}
			return w.Flush()
		})
}

// orDash is s, or "-" for an empty column.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// versionArg reads the positional argument name (VERSION, FROM, TO), a
// positive version number.
func versionArg(name, v string) (int, error) {
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("%s must be a positive number, not %q", name, v)
	}
	return n, nil
}

// newPromoteCommand is `sitedrop promote ID VERSION`: a draft (or any
// kept version) goes live at once; aliases stay.
func newPromoteCommand() *cobra.Command {
	return keyedCommand("promote ID VERSION", "Make a kept version (a draft) of a deployment live; its aliases stay", cobra.ExactArgs(2),
		func(c *cobra.Command, api *client.Client, args []string) error {
			n, err := versionArg("VERSION", args[1])
			if err != nil {
				return err
			}
			ans, err := api.Promote(args[0], n)
			if err != nil {
				return err
			}
			fmt.Fprintf(c.OutOrStdout(), "Version %d of %s is live: %s\n", ans.Version, safetext.Escape(ans.Slug), safetext.Escape(ans.URL))
			return nil
		})
}

// newAliasesCommand is `sitedrop aliases ID [--delete NAME]`: the
// deployment's aliases with their versions and addresses, or the
// deletion of one (its version stays).
func newAliasesCommand() *cobra.Command {
	var del string
	c := keyedCommand("aliases ID", "List a deployment's aliases (NAME--<slug>), or delete one with --delete NAME", cobra.ExactArgs(1),
		func(c *cobra.Command, api *client.Client, args []string) error {
			if del != "" {
				msg, err := api.DeleteAlias(args[0], del)
				if err != nil {
					return err
				}
				fmt.Fprintln(c.OutOrStdout(), safetext.Escape(msg))
				return nil
			}
			aliases, err := api.Aliases(args[0])
			if err != nil {
				return err
			}
			w := tabwriter.NewWriter(c.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "ALIAS\tVERSION\tURL")
			for _, a := range aliases {
				fmt.Fprintf(w, "%s\t%d\t%s\n", safetext.Escape(a.Name), a.Version, orDash(safetext.Escape(a.URL)))
			}
			return w.Flush()
		})
	c.Flags().StringVar(&del, "delete", "", "delete this alias (its host stops serving; the version stays)")
	return c
}

// newDiffCommand is `sitedrop diff ID FROM TO`: what version TO adds,
// changes and removes compared with version FROM, a line a file.
func newDiffCommand() *cobra.Command {
	return keyedCommand("diff ID FROM TO", "Show the files version TO of a deployment adds (+), changes (~) and removes (-) compared with version FROM", cobra.ExactArgs(3),
		func(c *cobra.Command, api *client.Client, args []string) error {
			from, err := versionArg("FROM", args[1])
			if err != nil {
				return err
			}
			to, err := versionArg("TO", args[2])
			if err != nil {
				return err
			}
			d, err := api.Diff(args[0], from, to)
			if err != nil {
				return err
			}
			out := c.OutOrStdout()
			for _, f := range d.Added {
				fmt.Fprintf(out, "+ %s (%d bytes)\n", safetext.Escape(f.Path), f.Size)
			}
			for _, f := range d.Changed {
				fmt.Fprintf(out, "~ %s (%d -> %d bytes)\n", safetext.Escape(f.Path), f.FromSize, f.ToSize)
			}
			for _, f := range d.Removed {
				fmt.Fprintf(out, "- %s (%d bytes)\n", safetext.Escape(f.Path), f.Size)
			}
			fmt.Fprintf(c.ErrOrStderr(), "Version %d against %d: %d added, %d changed, %d removed\n", d.To, d.From, len(d.Added), len(d.Changed), len(d.Removed))
			return nil
		})
}

// newRollbackCommand is `sitedrop rollback ID N`.
func newRollbackCommand() *cobra.Command {
	return keyedCommand("rollback ID VERSION", "Make a kept version of a deployment live again", cobra.ExactArgs(2),
		func(c *cobra.Command, api *client.Client, args []string) error {
			n, err := versionArg("VERSION", args[1])
			if err != nil {
				return err
			}
			ans, err := api.Rollback(args[0], n)
			if err != nil {
				return err
			}
			fmt.Fprintf(c.OutOrStdout(), "Version %d of %s is live: %s\n", ans.Version, safetext.Escape(ans.Slug), safetext.Escape(ans.URL))
			return nil
		})
}
