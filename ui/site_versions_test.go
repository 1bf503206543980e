package ui

import (
	"strings"
	"testing"
)

// TestVersionChangesCut: a list cut to MaxChangesShown says how many it
// leaves out, and the summary counts them all.
func TestVersionChangesCut(t *testing.T) {
	got := render(t, versionChanges(&VersionChanges{From: 1, To: 2,
		Added: []ChangedFile{{Path: "a.html", To: "1 kB"}}, MoreAdded: 5,
		Removed: []ChangedFile{{Path: "<b>.txt", From: "3 B"}}}))
	for _, want := range []string{
		`<p data-testid="changes-summary">6 added, 0 changed, 1 removed.</p>`,
		`<p class="muted">And 5 more: the API's diff lists them all.</p>`,
		`<code class="long">&lt;b&gt;.txt</code> <span class="muted">3 B</span>`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("changes lack %s:\n%s", want, got)
		}
	}
	if strings.Contains(got, "changes-changed") {
		t.Error("an empty list is shown")
	}
}

func TestPreviewHost(t *testing.T) {
	for in, want := range map[string]string{
		"https://v3--a.example.com/": "v3--a.example.com",
		"http://staging--a.test:80/": "staging--a.test:80",
		"":                           "",
	} {
		if got := previewHost(in); got != want {
			t.Errorf("previewHost(%q) = %q, want %q", in, got, want)
		}
	}
}
