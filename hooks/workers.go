package hooks

import (
	"context"
	"sync"
	"time"

	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tools/hook"
)

// startWorkers runs the background senders of a serving app: webhook
// deliveries, notification mails and, with --store s3://, the published
// manifests. They stop when the app terminates.
func (sd *sitedrop) startWorkers() {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{}, 3)
	go func() { sd.deliverer.Run(ctx); done <- struct{}{} }()
	go func() { sd.runNotifier(ctx); done <- struct{}{} }()
	go func() { sd.runPublisher(ctx); done <- struct{}{} }()
	var stopOnce sync.Once // terminate may run twice (a failed restart)
	sd.app.OnTerminate().Bind(&hook.Handler[*core.TerminateEvent]{
		Id: "sitedropStopWorkers",
		Func: func(e *core.TerminateEvent) error {
			stopOnce.Do(func() {
				cancel()
				for range 3 {
					select {
					case <-done:
					case <-time.After(15 * time.Second):
					}
				}
			})
			return e.Next()
		},
	})
}

// runNotifier sends due notification mails when woken and every few
// seconds, until ctx ends.
func (sd *sitedrop) runNotifier(ctx context.Context) {
	tick := time.NewTicker(5 * time.Second)
	defer tick.Stop()
	for {
		if _, err := sd.sendDueNotifications(time.Now()); err != nil {
			sd.app.Logger().Error("notification mails", "error", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		case <-sd.notifyWake:
		}
	}
}

// wakeWorkers tells the senders that there is new work.
func (sd *sitedrop) wakeWorkers() {
	sd.deliverer.Wake()
	select {
	case sd.notifyWake <- struct{}{}:
	default:
	}
}
