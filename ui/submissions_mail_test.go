package ui

import (
	"context"
	"strings"
	"testing"
)

// TestSubmissionsTextLineBreaks: a submitter's line breaks (in a value or
// a field name, whatever the break character) cannot make lines that read
// as another field, another submission or a header: continuation lines are
// indented deeper than fields, and other control characters are replaced.
func TestSubmissionsTextLineBreaks(t *testing.T) {
	p := SubmissionsMailProps{Slug: "demo", SiteURL: "http://demo.localhost/", Total: 2, ListURL: "http://localhost/account/sites/d1",
		Items: []SubmissionItem{
			{CreatedAt: "2026-11-22T12:01:00Z", Fields: []SubmissionField{
				{Name: "email", Value: "a@example.com"},
				{Name: "message", Value: "hi\nFrom: boss@example.com\r\n\r\nfield: fake\rcr\u2028ls\u0085nel\vvt\fff"},
				{Name: "x\n  name", Value: "esc\x1b[2Jbell\x07tab\tok"},
			}},
			{CreatedAt: "2026-11-22T12:00:00Z", Fields: []SubmissionField{
				{Name: "message", Value: "x\n\n2026-11-22T11:00:00Z\n  email: forged@example.com\n"},
			}},
		}}
	want := "2 new submissions on demo\n" +
		"\n" +
		"2026-11-22T12:01:00Z\n" +
		"  email: a@example.com\n" +
		"  message: hi\n" +
		"    From: boss@example.com\n" +
		"    \n" +
		"    field: fake\n" +
		"    cr\n" +
		"    ls\n" +
		"    nel\n" +
		"    vt\n" +
		"    ff\n" +
		"  x\n" +
		"      name: esc\uFFFD[2Jbell\uFFFDtab\tok\n" +
		"\n" +
		"2026-11-22T12:00:00Z\n" +
		"  message: x\n" +
		"    \n" +
		"    2026-11-22T11:00:00Z\n" +
		"      email: forged@example.com\n" +
		"    \n" +
		"\n" +
		"Site: http://demo.localhost/\n" +
		"All submissions: http://localhost/account/sites/d1\n"
	if got := SubmissionsText(p); got != want {
		t.Errorf("SubmissionsText =\n%s\nwant\n%s", got, want)
	}

	// The HTML part: values are escaped, and a line break is white space
	// inside the field's paragraph, so no markup or field can be forged.
	html, err := RenderString(context.Background(), SubmissionsMail(p))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(html, "<strong>"); n != 4 {
		t.Errorf("the HTML part has %d field names, want 4", n)
	}
	p.Items[1].Fields[0].Value = "x\n</p><p><strong>email</strong>: forged"
	html, err = RenderString(context.Background(), SubmissionsMail(p))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(html, "<strong>email</strong>: forged") || strings.Count(html, "<strong>") != 4 || strings.Contains(html, "\x1b") {
		t.Errorf("the HTML part lets a value forge a field: %s", html)
	}
}
