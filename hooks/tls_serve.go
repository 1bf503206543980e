package hooks

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tools/hook"
)

// tlsServing is what --https adds to a serving app: the certificate
// manager and the plain HTTP listener for challenges and redirects.
type tlsServing struct {
	certs *certManager
	// http is the plain HTTP server; nil with --http "".
	http         *http.Server
	httpListener net.Listener
	// stopCerts ends certificate management.
	stopCerts context.CancelFunc
}

// prepareTLS, for a server started with --https, replaces PocketBase's
// autocert with certmagic and binds the plain HTTP listener (so a busy
// port fails the start). Call start once the HTTPS listener is bound;
// close undoes everything when the start fails.
func (sd *sitedrop) prepareTLS(se *core.ServeEvent) (*tlsServing, error) {
	s := sd.cfg.Serve
	ts := &tlsServing{}
	if s.HTTPAddr != "" {
		ln, err := net.Listen("tcp", s.HTTPAddr)
		if err != nil {
			return nil, fmt.Errorf("listen on --http %s: %w", s.HTTPAddr, err)
		}
		// counted with the main listener's connections: one cap per client
		ts.httpListener = limitedListener{Listener: ln, limit: sd.conns}
	}
	httpPort := 0
	if ts.httpListener != nil {
		httpPort = ts.httpListener.Addr().(*net.TCPAddr).Port
	}
	_, httpsPort, err := splitListenAddr(se.Server.Addr)
	if err != nil {
		ts.close()
		return nil, fmt.Errorf("--https %s: %w", se.Server.Addr, err)
	}
	certs, err := newCertManager(sd, s, httpPort, httpsPort)
	if err != nil {
		ts.close()
		return nil, err
	}
	ts.certs = certs
	// PocketBase's autocert is left unused: its HTTP handler is not
	// started (the serve command passes no HttpAddr) and its certificates
	// are no longer asked for.
	se.Server.TLSConfig = certs.tlsConfig()
	return ts, nil
}

// start serves the plain HTTP listener and starts obtaining and renewing
// the managed certificates. main is the main server: its handler answers
// /api/health, and its error log (PocketBase's, to the app's debug log)
// takes the plain listener's errors too.
func (ts *tlsServing) start(sd *sitedrop, main *http.Server) error {
	if ts.httpListener != nil {
		ts.http = &http.Server{
			Handler:        sd.httpRedirectHandler(main.Handler, ts.certs.httpChallengeHandler),
			ReadTimeout:    30 * time.Second,
			WriteTimeout:   30 * time.Second,
			MaxHeaderBytes: 64 << 10,
			ErrorLog:       main.ErrorLog,
		}
		sd.cfg.Serve.serverTimeouts(ts.http)
		go func() {
			if err := ts.http.Serve(ts.httpListener); err != nil && !errors.Is(err, http.ErrServerClosed) {
				sd.app.Logger().Error("plain HTTP listener stopped", "error", err)
			}
		}()
	}
	ctx, cancel := context.WithCancel(context.Background())
	ts.stopCerts = cancel
	return ts.certs.start(ctx)
}

// close stops certificate management and closes the plain HTTP listener
// at once (shutdown drains it first, see bindGracefulShutdown).
func (ts *tlsServing) close() {
	if ts.stopCerts != nil {
		ts.stopCerts()
	}
	if ts.certs != nil {
		ts.certs.stop()
	}
	if ts.http != nil {
		ts.http.Close()
	} else if ts.httpListener != nil {
		ts.httpListener.Close()
	}
}

// bindTLSCleanup stops certificate management when the app terminates,
// after the servers have drained.
func (sd *sitedrop) bindTLSCleanup(ts *tlsServing) {
	sd.app.OnTerminate().Bind(&hook.Handler[*core.TerminateEvent]{
		Id: "sitedropTLSCleanup",
		Func: func(e *core.TerminateEvent) error {
			ts.close()
			return e.Next()
		},
	})
}
