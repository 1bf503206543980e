// Package admincmd holds the server's admin commands, which run on the
// server's data dir (PocketBase's cmd package is the model: a command
// owns its flags and calls the domain package):
//
//	app.RootCmd.AddCommand(admincmd.NewUserCommand(app), admincmd.NewKeyCommand(app))
//
// `sitedrop user create` makes an account; `sitedrop key create|list|revoke`
// manages an account's API keys (sites/accounts does the work).
package admincmd

import (
	"context"
	"errors"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/pocketbase/pocketbase/core"
	"github.com/spf13/cobra"

	"sitedrop/sites"
	"sitedrop/sites/accounts"
)

// NewUserCommand is `sitedrop user create EMAIL [--plan free|pro]`.
func NewUserCommand(app core.App) *cobra.Command {
	cmd := &cobra.Command{Use: "user", Short: "Manage sitedrop accounts"}
	var plan string
	create := &cobra.Command{
		Use:          "create EMAIL",
		Short:        "Create an account (an existing one keeps its record; --plan updates its plan)",
		Args:         cobra.ExactArgs(1),
		SilenceUsage: true,
		RunE: func(c *cobra.Command, args []string) error {
			if plan != "" && plan != sites.PlanFree && plan != sites.PlanPro {
				return fmt.Errorf("--plan must be %s or %s", sites.PlanFree, sites.PlanPro)
			}
			if err := app.RunAllMigrations(); err != nil {
				return fmt.Errorf("run migrations: %w", err)
			}
			user, created, err := accounts.UpsertUser(app, accounts.NormalizeEmail(args[0]), plan)
			if err != nil {
				return err
			}
			verb := "Updated"
			if created {
				verb = "Created"
			}
			fmt.Fprintf(c.OutOrStdout(), "%s user %s (plan %s, id %s)\n", verb, user.Email(), accounts.UserOf(user).Plan(), user.Id)
			return nil
		},
	}
	create.Flags().StringVar(&plan, "plan", "", "free or pro (default free for a new account)")
	cmd.AddCommand(create)
	return cmd
}

// NewKeyCommand is `sitedrop key create|list|revoke`.
func NewKeyCommand(app core.App) *cobra.Command {
	cmd := &cobra.Command{Use: "key", Short: "Manage API keys (shown once, stored only as hashes)"}
	var name string
	create := &cobra.Command{
		Use:          "create EMAIL",
		Short:        "Create an API key for an account; the key is the last line of output",
		Args:         cobra.ExactArgs(1),
		SilenceUsage: true,
		RunE: func(c *cobra.Command, args []string) error {
			user, err := findUser(app, args[0])
			if err != nil {
				return err
			}
			plain, rec, err := accounts.CreateAPIKey(context.Background(), app, user, name) // the operator, on the server: sitedrop's
			if err != nil {
				return err
			}
			out := c.OutOrStdout()
			fmt.Fprintf(out, "Created API key %s for %s. It is shown once; store it now:\n", accounts.APIKeyOf(rec).Prefix(), user.Email())
			fmt.Fprintln(out, plain)
			return nil
		},
	}
	create.Flags().StringVar(&name, "name", "", "a name to recognise the key by")

	list := &cobra.Command{
		Use:          "list EMAIL",
		Short:        "List an account's API keys",
		Args:         cobra.ExactArgs(1),
		SilenceUsage: true,
		RunE: func(c *cobra.Command, args []string) error {
			user, err := findUser(app, args[0])
			if err != nil {
				return err
			}
			keys, err := accounts.ListAPIKeys(app, user)
			if err != nil {
				return err
			}
			w := tabwriter.NewWriter(c.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "PREFIX\tNAME\tCREATED\tLAST USED")
			for _, rec := range keys {
				k := accounts.APIKeyOf(rec)
				last := "never"
				if t := k.LastUsedAt(); !t.IsZero() {
					last = timestamp(t)
				}
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", k.Prefix(), k.Name(),
					timestamp(k.Created()), last)
			}
			return w.Flush()
		},
	}

	revoke := &cobra.Command{
		Use:          "revoke PREFIX",
		Short:        "Revoke the API key with this prefix (as shown by key list)",
		Args:         cobra.ExactArgs(1),
		SilenceUsage: true,
		RunE: func(c *cobra.Command, args []string) error {
			if err := app.RunAllMigrations(); err != nil {
				return fmt.Errorf("run migrations: %w", err)
			}
			rec, err := accounts.RevokeAPIKey(context.Background(), app, args[0])
			if errors.Is(err, accounts.ErrKeyNotFound) {
				return fmt.Errorf("no API key with prefix %q", args[0])
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(c.OutOrStdout(), "Revoked API key %s\n", accounts.APIKeyOf(rec).Prefix())
			return nil
		},
	}
	cmd.AddCommand(create, list, revoke)
	return cmd
}

// findUser is the account of email, the schema migrated first, or an
// error that tells how to create it.
func findUser(app core.App, email string) (*core.Record, error) {
	if err := app.RunAllMigrations(); err != nil {
		return nil, fmt.Errorf("run migrations: %w", err)
	}
	user, err := accounts.FindUserByEmail(app, accounts.NormalizeEmail(email))
	if err != nil {
		return nil, fmt.Errorf("no user %q (create one with: sitedrop user create %s)", email, email)
	}
	return user, nil
}

// timestamp formats t as the API does: RFC 3339 in UTC with a Z.
func timestamp(t time.Time) string {
	return t.UTC().Format(time.RFC3339)
}
