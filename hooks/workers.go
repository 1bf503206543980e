package hooks

import (
	"context"
	"sync"
	"time"

	"sitedrop/sites/forms"
)

// senders are the background senders of a serving app: webhook
// deliveries, notification mails and, with --store s3://, the published
// manifests. The lifecycle starts and stops them (bindLifecycle).
type senders struct {
	deliverer *forms.Deliverer
	notifier  *forms.Notifier
	publisher *sitePublisher

	cancel  context.CancelFunc
	stopped chan struct{} // closed when every sender has returned
}

// start runs the senders.
func (s *senders) start() {
	ctx, cancel := context.WithCancel(context.Background())
	var running sync.WaitGroup
	running.Go(func() { s.deliverer.Run(ctx) })
	running.Go(func() { s.notifier.Run(ctx) })
	running.Go(func() { s.publisher.run(ctx) })
	stopped := make(chan struct{})
	go func() { running.Wait(); close(stopped) }()
	s.cancel, s.stopped = cancel, stopped
}

// stop stops the senders and waits for them until ctx ends (a send in
// flight may take its own timeout).
func (s *senders) stop(ctx context.Context) {
	s.cancel()
	select {
	case <-s.stopped:
	case <-ctx.Done():
	}
}

// workersStopWait bounds how long terminating waits for the senders.
const workersStopWait = 15 * time.Second

// wake tells the senders that there is new work.
func (s *senders) wake() {
	s.deliverer.Wake()
	s.notifier.Wake()
}
