package ui

import (
	"context"
	"strings"
	"testing"
)

// TestFormPagesEscape: submitted values and URLs are escaped or refused in
// the site page, the thank-you page and the notification mail.
func TestFormPagesEscape(t *testing.T) {
	ctx := context.Background()
	evil := `<script>alert(1)</script>`
	lp := LayoutProps{SignedIn: true, Email: "a@example.com"}
	head := SiteHead{ID: "d1", Slug: "demo", Title: evil, URL: "http://demo.localhost/"}
	formsTab, err := RenderString(ctx, SiteForms(lp, head, SiteFormsProps{
		Total: 1, Page: 1,
		Submissions: []AccountSubmission{{ID: "s1", CreatedAt: "2026-11-22T12:00:00Z", Fields: []SubmissionField{{Name: evil, Value: evil}}}},
		Webhooks: []AccountWebhook{{ID: "w1", URL: "https://example.com/" + evil, Type: "generic", Events: "submission",
			Deliveries: []WebhookDelivery{{ID: "d1", Event: "test", Status: "failed", Attempts: 8, LastError: evil}}}},
	}))
	if err != nil {
		t.Fatal(err)
	}
	settingsTab, err := RenderString(ctx, SiteSettingsTab(lp, head, SiteSettingsProps{Settings: SiteSettings{Title: evil, Description: evil}}))
	if err != nil {
		t.Fatal(err)
	}
	subDel, err := RenderString(ctx, SubmissionDelete(lp, head, SubmissionDeleteProps{Submission: AccountSubmission{ID: "s1",
		CreatedAt: "2026-11-22T12:00:00Z", Fields: []SubmissionField{{Name: evil, Value: evil}}}}))
	if err != nil {
		t.Fatal(err)
	}
	hookDel, err := RenderString(ctx, WebhookDelete(lp, head, AccountWebhook{ID: "w1", URL: "https://example.com/" + evil}))
	if err != nil {
		t.Fatal(err)
	}
	site := formsTab + settingsTab + subDel + hookDel
	for _, want := range []string{`data-testid="submission-row"`, `data-testid="webhook-row"`, `data-testid="submissions-csv"`, "&lt;script&gt;",
		`data-testid="settings-form"`, `data-testid="confirm-submission"`, `data-testid="confirm-webhook"`} {
		if !strings.Contains(site, want) {
			t.Errorf("site page lacks %s", want)
		}
	}
	if strings.Contains(site, evil) {
		t.Error("site page does not escape submitted values")
	}

	del, err := RenderString(ctx, SiteDelete(LayoutProps{SignedIn: true}, SiteDeleteProps{ID: "d1", Slug: "demo", Title: evil, URL: "http://demo.localhost/"}))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(del, evil) || !strings.Contains(del, `data-testid="delete-slug"`) {
		t.Error("delete confirmation does not escape the title")
	}

	thanks, err := RenderString(ctx, Submitted(LayoutProps{}, SubmittedProps{BackURL: "javascript:alert(1)"}))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(thanks, "javascript:") {
		t.Error("thank-you page links to javascript:")
	}

	p := SubmissionsMailProps{Slug: "demo", SiteURL: "http://demo.localhost/", Total: 3, ListURL: "http://localhost/account",
		Items: []SubmissionItem{{CreatedAt: "2026-11-22T12:00:00Z", Fields: []SubmissionField{{Name: "msg", Value: evil}}}}}
	mail, err := RenderString(ctx, SubmissionsMail(p))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(mail, evil) || !strings.Contains(mail, "3 new submissions on demo") || !strings.Contains(mail, "And 2 more.") {
		t.Errorf("mail: %s", mail)
	}
	text := SubmissionsText(p)
	if !strings.HasPrefix(text, "3 new submissions on demo\n") || !strings.Contains(text, "  msg: "+evil) || !strings.Contains(text, "And 2 more.") {
		t.Errorf("text mail: %q", text)
	}
}

// TestSiteFormsPaging: the Forms tab links to the newer and older pages of
// submissions that exist, on the Forms tab.
func TestSiteFormsPaging(t *testing.T) {
	head := SiteHead{ID: "d1", Slug: "demo"}
	sub := []AccountSubmission{{ID: "s1", CreatedAt: "2026-11-22T12:00:00Z"}}
	for _, c := range []struct {
		page         int
		newer, older bool
	}{{1, false, true}, {2, true, true}, {3, true, false}} {
		got, err := RenderString(context.Background(), SiteForms(LayoutProps{}, head, SiteFormsProps{Submissions: sub, Total: 120, Page: c.page, PageSize: 50}))
		if err != nil {
			t.Fatal(err)
		}
		newer := strings.Contains(got, `href="/account/sites/d1/forms?page=`+itoa(c.page-1)+`#submissions" data-testid="submissions-newer"`)
		older := strings.Contains(got, `href="/account/sites/d1/forms?page=`+itoa(c.page+1)+`#submissions" data-testid="submissions-older"`)
		if newer != c.newer || older != c.older || strings.Count(got, "data-testid=\"submissions-") != 2+btoi(c.newer)+btoi(c.older) {
			t.Errorf("page %d: newer %v, older %v", c.page, newer, older)
		}
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
