// sitedrop publishes a web site to a live URL with one HTTP request.
//
// It is one binary: PocketBase gives it the SQLite store, accounts and the
// admin dashboard (/_/); package hooks binds the deploy API, the site
// server and the lifecycle rules; package sites holds the product's core.
package main

import (
	"log"
	"os"

	"github.com/pocketbase/pocketbase"
	"github.com/pocketbase/pocketbase/cmd"
	"github.com/pocketbase/pocketbase/plugins/migratecmd"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"sitedrop/hooks"
	"sitedrop/hooks/admincmd"
	"sitedrop/hooks/cli"
	"sitedrop/hooks/dbconnect"
	"sitedrop/hooks/server"
	_ "sitedrop/migrations"
)

func main() {
	app := pocketbase.NewWithConfig(pocketbase.Config{
		DefaultDev: false, // no SQL logging under `go run`
		// The data dir when --dir is not given: $SITEDROP_DIR (the
		// container image sets /data), else ./pb_data beside the binary.
		DefaultDataDir: os.Getenv("SITEDROP_DIR"),
		// PocketBase's SQLite, whose connections keep their statements
		DBConnect: dbconnect.Open,
	})

	// PocketBase's error writer prints the text on stdout (only its colour
	// codes reach stderr): errors and the CLI's progress belong on stderr,
	// so that `URL=$(sitedrop deploy dist)` captures the URL alone.
	app.RootCmd.SetErr(os.Stderr)

	cfg := hooks.DefaultConfig()
	migratecmd.MustRegister(app, app.RootCmd, migratecmd.Config{Automigrate: false})
	app.RootCmd.AddCommand(
		server.NewServeCommand(app, &cfg.Serve, hooks.ServeSettings(&cfg)),
		cmd.NewSuperuserCommand(app),
		admincmd.NewUserCommand(app),
		admincmd.NewKeyCommand(app),
	)
	app.RootCmd.AddCommand(cli.Commands()...)
	bindServerFlags(app.RootCmd, &cfg)
	// Parse early, as PocketBase does with its own flags, so the config is
	// complete when the app bootstraps (before the command runs).
	_ = app.RootCmd.ParseFlags(os.Args[1:])
	hooks.MustRegister(app, &cfg)
	app.RootCmd.Use = "sitedrop"
	app.RootCmd.Short = "sitedrop: publish a web site to a live URL with one HTTP request"
	failed := cli.TrackErrors(app.RootCmd)

	if c, _, err := app.RootCmd.Find(os.Args[1:]); err == nil && (c.Annotations[cli.NoBootstrapAnnotation] == "true" || hooks.ReplicaRequested(c, os.Args[1:])) {
		// The client commands and the health probe talk to a server over
		// HTTP, and a replica serves from the object store: they must not
		// bootstrap an app on (or create) a local data dir, which
		// app.Execute would do.
		if app.RootCmd.Execute() != nil || failed() != nil {
			os.Exit(1)
		}
		return
	}
	if err := app.Execute(); err != nil {
		log.Fatal(err)
	}
	if failed() != nil {
		os.Exit(1) // cobra has printed the error
	}
}

// bindServerFlags gives the server's flags (hooks.BindFlags) to every
// command that bootstraps the app, whose bootstrap reads cfg: serve,
// superuser, user, key, migrate, and their subcommands. The client
// commands, which talk to a server over HTTP, keep only their own flags.
//
// The root command knows them too, hidden, for two readings of the whole
// command line before the command runs: cobra's search for the command,
// so that a flag given before the command's name (`sitedrop --analytics
// serve`) is not taken for one that needs a value, and main's early
// parse. A client command still refuses them.
func bindServerFlags(root *cobra.Command, cfg *hooks.Config) {
	for _, c := range root.Commands() {
		if c.Annotations[cli.NoBootstrapAnnotation] != "true" {
			hooks.BindFlags(c.PersistentFlags(), cfg)
		}
	}
	early := pflag.NewFlagSet("server", pflag.ContinueOnError)
	hooks.BindFlags(early, cfg)
	early.VisitAll(func(f *pflag.Flag) { f.Hidden = true })
	root.Flags().AddFlagSet(early)
}
