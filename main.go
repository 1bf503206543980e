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

	"sitedrop/hooks"
	"sitedrop/hooks/cli"
	_ "sitedrop/migrations"
)

func main() {
	app := pocketbase.NewWithConfig(pocketbase.Config{
		DefaultDev: false, // no SQL logging under `go run`
		// The data dir when --dir is not given: $SITEDROP_DIR (the
		// container image sets /data), else ./pb_data beside the binary.
		DefaultDataDir: os.Getenv("SITEDROP_DIR"),
	})

	// PocketBase's error writer prints the text on stdout (only its colour
	// codes reach stderr): errors and the CLI's progress belong on stderr,
	// so that `URL=$(sitedrop deploy dist)` captures the URL alone.
	app.RootCmd.SetErr(os.Stderr)

	cfg := hooks.DefaultConfig()
	hooks.BindFlags(app.RootCmd.PersistentFlags(), &cfg)
	// Parse early, as PocketBase does with its own flags, so the config is
	// complete when the app bootstraps (before the command runs).
	_ = app.RootCmd.ParseFlags(os.Args[1:])

	migratecmd.MustRegister(app, app.RootCmd, migratecmd.Config{Automigrate: false})
	hooks.MustRegister(app, &cfg)
	app.RootCmd.AddCommand(
		hooks.NewServeCommand(app, &cfg),
		cmd.NewSuperuserCommand(app),
		hooks.NewUserCommand(app),
		hooks.NewKeyCommand(app),
	)
	app.RootCmd.AddCommand(cli.Commands()...)
	app.RootCmd.Use = "sitedrop"
	app.RootCmd.Short = "sitedrop: publish a web site to a live URL with one HTTP request"
	failed := hooks.TrackErrors(app.RootCmd)

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
