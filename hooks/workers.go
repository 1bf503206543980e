package hooks

import (
	"context"
	"sync"
	"time"
)

// workers are the background senders of a serving app, started and
// stopped by its lifecycle (bindLifecycle).
type workers struct {
	cancel  context.CancelFunc
	stopped chan struct{} // closed when every sender has returned
}

// startWorkers runs the background senders: webhook deliveries,
// notification mails and, with --store s3://, the published manifests.
func (sd *sitedrop) startWorkers() {
	ctx, cancel := context.WithCancel(context.Background())
	var running sync.WaitGroup
	running.Go(func() { sd.deliverer.Run(ctx) })
	running.Go(func() { sd.runNotifier(ctx) })
	running.Go(func() { sd.runPublisher(ctx) })
	stopped := make(chan struct{})
	go func() { running.Wait(); close(stopped) }()
	sd.workers = workers{cancel: cancel, stopped: stopped}
}

// stopWorkers stops the senders and waits for them until ctx ends (a send
// in flight may take its own timeout).
func (sd *sitedrop) stopWorkers(ctx context.Context) {
	sd.workers.cancel()
	select {
	case <-sd.workers.stopped:
	case <-ctx.Done():
	}
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
