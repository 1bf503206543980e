package server

import (
	"context"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tools/hook"

	"sitedrop/sites/serve"
)

// GracefulShutdownPriority runs the drain before PocketBase's own
// shutdown (priority -9999), which gives the server one second only.
const GracefulShutdownPriority = -10000

// BindGracefulShutdown makes termination (SIGTERM, Ctrl-C) graceful: the
// servers stop accepting connections, and requests in flight, uploads
// included, get up to timeout (--shutdown-timeout) to finish. Realtime (SSE)
// connections of the dashboard never finish by themselves, so they are
// ended at once. At the deadline the connections still open are closed;
// their handlers see write errors and end on their own.
//
// The main server's requests get a base context of the drain's own:
// PocketBase cancels its base context as soon as the listener closes
// (apis.Serve returns then), which would cancel every request in flight
// at the start of the drain. This one is cancelled when the drain is over.
//
// The connections the main listener serves itself (see serve.ListenFront;
// ln, nil for none) are drained beside the main server's.
//
// Call it in OnServe, before the main server starts; others (the plain
// HTTP listener under TLS) are drained too.
func BindGracefulShutdown(app core.App, timeout time.Duration, main *http.Server, ln *serve.Listener, others ...*http.Server) {
	baseCtx, cancelBase := context.WithCancel(context.Background())
	main.BaseContext = func(net.Listener) context.Context { return baseCtx }
	servers := append([]*http.Server{main}, others...)
	app.OnTerminate().Bind(&hook.Handler[*core.TerminateEvent]{
		Id:       "sitedropGracefulShutdown",
		Priority: GracefulShutdownPriority,
		Func: func(e *core.TerminateEvent) error {
			ctx, cancel := context.WithTimeout(context.Background(), timeout)
			defer cancel()
			var wg sync.WaitGroup
			for _, srv := range servers {
				if srv == nil {
					continue
				}
				wg.Go(func() {
					if err := srv.Shutdown(ctx); err != nil {
						// the deadline passed: cut what is left, before the
						// database closes under it
						_ = srv.Close()
					}
				})
			}
			wg.Go(func() { _ = ln.ShutdownConns(ctx) })
			drained := make(chan struct{})
			go func() { wg.Wait(); close(drained) }()
			tick := time.NewTicker(100 * time.Millisecond)
			defer tick.Stop()
			for {
				endRealtimeClients(app)
				select {
				case <-drained:
					cancelBase()
					return e.Next()
				case <-tick.C: // clients that connected meanwhile
				}
			}
		},
	})
}

// endRealtimeClients closes every realtime subscription, which ends its
// SSE request.
func endRealtimeClients(app core.App) {
	for _, c := range app.SubscriptionsBroker().Clients() {
		c.Discard()
	}
}
