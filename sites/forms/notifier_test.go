package forms_test

import (
	"errors"
	"testing"
	"time"

	"sitedrop/sites/forms"
)

// TestNotifierBacksOffAFailedSend: a mail that fails is tried again once
// the interval has passed, not on every pass; one sent is not sent again.
func TestNotifierBacksOffAFailedSend(t *testing.T) {
	app := newHookApp(t)
	owner := mustUser(t, app, "owner@example.com")
	rec, ref := mustOwnedDeployment(t, app, "mailed", owner)
	if err := forms.SetNotifyEmail(app, forms.DeploymentOf(rec), true); err != nil {
		t.Fatal(err)
	}
	if _, err := forms.Submit(app, ref, map[string]any{"name": "Ann"}, nil); err != nil {
		t.Fatal(err)
	}
	var got []*forms.Notification
	fail := true
	n := forms.NewNotifier(app, func(note *forms.Notification) error {
		got = append(got, note)
		if fail {
			return errors.New("smtp down")
		}
		return nil
	})
	now := time.Now().Add(time.Second) // after the submission
	if sent, err := n.SendDue(now); err != nil || sent != 0 || len(got) != 1 {
		t.Fatalf("failing send: %d sent, %d tries, %v", sent, len(got), err)
	}
	if sent, _ := n.SendDue(now.Add(5 * time.Second)); sent != 0 || len(got) != 1 {
		t.Fatalf("within the interval: %d sent, %d tries, want no try", sent, len(got))
	}
	fail = false
	if sent, _ := n.SendDue(now.Add(forms.NotifyInterval + time.Second)); sent != 1 || len(got) != 2 {
		t.Fatalf("after the interval: %d sent, %d tries", sent, len(got))
	}
	if note := got[1]; note.To != "owner@example.com" || note.Total != 1 || note.Deployment.Slug() != "mailed" {
		t.Fatalf("notification: to %q, total %d, slug %q", note.To, note.Total, note.Deployment.Slug())
	}
	if sent, _ := n.SendDue(now.Add(5 * time.Minute)); sent != 0 || len(got) != 2 {
		t.Fatal("the same submission mailed twice")
	}
}
