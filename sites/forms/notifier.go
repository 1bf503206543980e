package forms

import (
	"context"
	"time"

	"github.com/pocketbase/pocketbase/core"
)

// Notifier sends the due notification mails (see FindDueNotifications)
// when woken and every few seconds. How a mail looks and goes out is the
// caller's: its send function.
type Notifier struct {
	app  core.App
	send func(*Notification) error
	wake chan struct{}
}

// NewNotifier returns a notifier of app's deployments that mails each
// notification with send.
func NewNotifier(app core.App, send func(*Notification) error) *Notifier {
	return &Notifier{app: app, send: send, wake: make(chan struct{}, 1)}
}

// notifyEvery is how often Run looks for due mails unwoken.
const notifyEvery = 5 * time.Second

// Run sends due mails when woken (Wake) and every few seconds, until ctx
// ends.
func (n *Notifier) Run(ctx context.Context) {
	tick := time.NewTicker(notifyEvery)
	defer tick.Stop()
	for {
		if _, err := n.SendDue(time.Now()); err != nil {
			n.app.Logger().Error("notification mails", "error", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		case <-n.wake:
		}
	}
}

// Wake tells Run that there may be new submissions to mail.
func (n *Notifier) Wake() {
	select {
	case n.wake <- struct{}{}:
	default:
	}
}

// SendDue mails the owners of deployments with e-mail notifications on
// about submissions not mailed yet, when their last mail is at least
// NotifyInterval old (FindDueNotifications): the first submission is
// mailed at once, later ones within the interval are batched into the
// next mail. It returns how many deployments it handled.
func (n *Notifier) SendDue(now time.Time) (int, error) {
	ids, err := FindDueNotifications(n.app, now)
	if err != nil {
		return 0, err
	}
	sent := 0
	for _, id := range ids {
		if err := n.notify(id, now); err != nil {
			n.app.Logger().Error("send submission notification", "deployment", id, "error", err)
			continue
		}
		sent++
	}
	return sent, nil
}

// notify mails one deployment's owner its new submissions.
func (n *Notifier) notify(id string, now time.Time) error {
	note, err := FindNotification(n.app, id)
	if err != nil || note == nil {
		return err
	}
	if err := n.send(note); err != nil {
		// try again in a minute, not on every pass
		_ = MarkNotifyFailed(n.app, note.Deployment.Id, now)
		return err
	}
	return MarkNotified(n.app, note, now)
}
