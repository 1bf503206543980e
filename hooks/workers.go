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
	var running sync.WaitGroup
	running.Go(func() { sd.deliverer.Run(ctx) })
	running.Go(func() { sd.runNotifier(ctx) })
	running.Go(func() { sd.runPublisher(ctx) })
	stopped := make(chan struct{})
	go func() { running.Wait(); close(stopped) }()
	var stopOnce sync.Once // terminate may run twice (a failed restart)
	sd.app.OnTerminate().Bind(&hook.Handler[*core.TerminateEvent]{
		Id: "sitedropStopWorkers",
		Func: func(e *core.TerminateEvent) error {
			stopOnce.Do(func() {
				cancel()
				select { // a send in flight may take its own timeout
				case <-stopped:
				case <-time.After(workersStopWait):
				}
			})
			return e.Next()
		},
	})
}

// workersStopWait bounds how long terminating waits for the workers.
const workersStopWait = 15 * time.Second

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
