package forms_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"sitedrop/sites/forms"
)

// TestSubmitAndFindBelongToOneDeployment: a stored submission keeps its
// form's field order and is found, listed and deleted only through its
// own deployment; another deployment's id gets ErrSubmissionNotFound.
func TestSubmitAndFindBelongToOneDeployment(t *testing.T) {
	t.Parallel()
	app := newHookApp(t)
	_, ref := mustDeployment(t, app, "one-site")
	_, other := mustDeployment(t, app, "two-site")
	sub, err := forms.Submit(app, ref, map[string]any{"b": "2", "a": "1", "c": []any{"x", "y"}}, []string{"b", "a"})
	if err != nil {
		t.Fatal(err)
	}
	if got := string(sub.RawData()); got != `{"b":"2","a":"1","c":["x","y"]}` {
		t.Fatalf("stored %s", got)
	}
	want := []forms.Field{{Name: "b", Value: "2"}, {Name: "a", Value: "1"}, {Name: "c", Value: `["x","y"]`}}
	if got := sub.Fields(); len(got) != 3 || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Fatalf("fields %v", got)
	}
	if j := sub.JSON(); j.ID != sub.Id || j.Data["a"] != "1" || !strings.HasSuffix(j.CreatedAt, "Z") {
		t.Fatalf("json %+v", j)
	}
	if n, err := forms.CountSubmissions(app, ref.ID); err != nil || n != 1 {
		t.Fatalf("count %d, %v", n, err)
	}
	if _, err := forms.FindSubmission(app, other.ID, sub.Id); !errors.Is(err, forms.ErrSubmissionNotFound) {
		t.Fatalf("found through another deployment: %v", err)
	}
	if _, err := forms.DeleteSubmission(app, other.ID, sub.Id); !errors.Is(err, forms.ErrSubmissionNotFound) {
		t.Fatalf("deleted through another deployment: %v", err)
	}
	if _, err := forms.DeleteSubmission(app, ref.ID, sub.Id); err != nil {
		t.Fatal(err)
	}
	if _, err := forms.FindSubmission(app, ref.ID, sub.Id); !errors.Is(err, forms.ErrSubmissionNotFound) {
		t.Fatalf("after delete: %v", err)
	}
}

// TestCreateWebhookRefusals: every refusal of CreateWebhook is a
// *WebhookError with the API's message, and changes nothing.
func TestCreateWebhookRefusals(t *testing.T) {
	t.Parallel()
	app := newHookApp(t)
	dep, _ := mustDeployment(t, app, "hook-site")
	guard := forms.WebhookGuard{AllowPrivate: true}
	none := []string{}
	bogus := []string{"submission", "nope"}
	tests := []struct {
		name, url, typ string
		events         *[]string
		want           string
	}{
		{"no url", "  ", forms.WebhookGeneric, nil, "url is required"},
		{"bad type", "http://127.0.0.1/x", "teams", nil, `type must be "generic" or "slack"`},
		{"no events", "http://127.0.0.1/x", forms.WebhookGeneric, &none, "events must name at least one event"},
		{"unknown event", "http://127.0.0.1/x", forms.WebhookGeneric, &bogus, `unknown event "nope"`},
		{"not http", "ftp://127.0.0.1/x", forms.WebhookGeneric, nil, ""},
	}
	for _, tt := range tests {
		_, _, err := forms.CreateWebhook(context.Background(), app, guard, dep.Id, tt.url, tt.typ, tt.events)
		var we *forms.WebhookError
		if !errors.As(err, &we) || !strings.Contains(we.Msg, tt.want) {
			t.Errorf("%s: %v, want a WebhookError with %q", tt.name, err, tt.want)
		}
	}
	if hooks, err := forms.FindWebhooks(app, dep.Id); err != nil || len(hooks) != 0 {
		t.Fatalf("refusals saved %d webhooks, %v", len(hooks), err)
	}
	for i := range forms.MaxWebhooksPerDeployment {
		h, secret, err := forms.CreateWebhook(context.Background(), app, guard, dep.Id, "http://127.0.0.1/h", forms.WebhookSlack, nil)
		if err != nil {
			t.Fatalf("webhook %d: %v", i, err)
		}
		if !strings.HasPrefix(secret, "whsec_") || h.Secret() != secret || !h.Active() || len(h.Events()) != len(forms.WebhookEvents) {
			t.Fatalf("webhook %d saved as %v", i, h)
		}
	}
	_, _, err := forms.CreateWebhook(context.Background(), app, guard, dep.Id, "http://127.0.0.1/h", forms.WebhookSlack, nil)
	var we *forms.WebhookError
	if !errors.As(err, &we) || we.Msg != "A deployment has at most 10 webhooks" {
		t.Fatalf("past the limit: %v", err)
	}
}

// TestFindWebhookAndDeliveryOfTheirDeployment: a webhook is found only
// through its deployment, a delivery only through its webhook.
func TestFindWebhookAndDeliveryOfTheirDeployment(t *testing.T) {
	t.Parallel()
	app := newHookApp(t)
	dep, ref := mustDeployment(t, app, "mine-site")
	otherDep, _ := mustDeployment(t, app, "theirs-site")
	hook := forms.WebhookOf(mustWebhook(t, app, dep.Id, "http://127.0.0.1/a", forms.WebhookGeneric, true))
	otherHook := forms.WebhookOf(mustWebhook(t, app, otherDep.Id, "http://127.0.0.1/b", forms.WebhookGeneric, true))
	if _, err := forms.FindWebhook(app, otherDep.Id, hook.Id); !errors.Is(err, forms.ErrWebhookNotFound) {
		t.Fatalf("webhook through another deployment: %v", err)
	}
	if h, err := forms.FindWebhook(app, dep.Id, hook.Id); err != nil || h.URL() != "http://127.0.0.1/a" {
		t.Fatalf("own webhook: %v, %v", h, err)
	}
	d, err := forms.QueueTest(app, hook, ref)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := forms.FindDelivery(app, otherHook, d.Id); !errors.Is(err, forms.ErrDeliveryNotFound) {
		t.Fatalf("delivery through another webhook: %v", err)
	}
	if got, err := forms.FindDelivery(app, hook, d.Id); err != nil || got.Event() != forms.EventTest || got.NextAttempt().IsZero() {
		t.Fatalf("own delivery: %v, %v", got, err)
	}
	if err := forms.DeleteWebhook(context.Background(), app, hook); err != nil {
		t.Fatal(err)
	}
	if _, err := forms.FindWebhook(app, dep.Id, hook.Id); !errors.Is(err, forms.ErrWebhookNotFound) {
		t.Fatalf("after delete: %v", err)
	}
	if log, err := forms.RecentDeliveries(app, hook.Id, 5); err != nil || len(log) != 0 {
		t.Fatalf("pending deliveries kept: %d, %v", len(log), err)
	}
}
