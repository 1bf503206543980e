// Package server is sitedrop's front door: everything between a
// connection and the code that answers it.
//
//   - front.go: Front, the one function that decides by a request's Host
//     which part answers (a site, a custom domain, the web host's router,
//     or a refusal), used by the listeners' handler and by the router;
//   - clientip.go: the client's address behind --trusted-proxies;
//   - listen.go: the main listener, with its per-client connection cap
//     and its header and keep-alive timeouts;
//   - tls.go: --https (certificates from an ACME CA through certs, the
//     plain HTTP listener for challenges and redirects);
//   - webhost.go: the web host's HTTP rules no route owns (CORS of
//     keyed requests, HSTS, the trailing-slash redirect), which hooks
//     binds; waiting_body.go: the refusal of a body not sent yet;
//   - store.go: the blob store --store names (a directory or S3);
//   - shutdown.go: the drain on SIGTERM;
//   - metrics/: the Prometheus metrics (--metrics), on a listener of
//     their own; Front.Wrap measures every answer by its host's class;
//   - serve.go, replica.go: the serve command and its --replica mode,
//     which serves the sites published to S3 with no database.
//
// It never imports hooks: hooks builds the values it needs once, from
// finished services, and hands them over. The serve command reads the
// rest of the settings through Settings, since flags fill them only when
// the command runs:
//
//	app.RootCmd.AddCommand(server.NewServeCommand(app, &cfg.Serve, hooks.ServeSettings(&cfg)))
//
//	// in OnServe, once the listen address is known:
//	front := &server.Front{Hosts: hosts, Sites: siteServer, CustomDomain: domains, Logger: app.Logger()}
//	front.Bind(se.Router)                              // for the test harness
//	se.Server.Handler = front.Wrap(se.Server.Handler) // for every listener
package server
