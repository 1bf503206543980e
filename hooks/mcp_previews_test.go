package hooks

import (
	"strings"
	"testing"
)

// TestMCPPreviews: the update tool saves a draft with an alias and a
// message (the site unchanged, the draft at its preview URL), list_versions
// names each version's preview URL, aliases and message, and promote
// makes the draft live; an anonymous draft is the API's 400.
func TestMCPPreviews(t *testing.T) {
	t.Parallel()
	env := newMCPEnv(t)
	cs := env.connect(t, keyAlice, "")

	_, before := env.fetch(t, "http://alice-site.sites.test/")
	text, d := mustTool(t, cs, "update", map[string]any{"id": idAliceSite, "html": "<!doctype html><title>D</title><h1>draft one</h1>",
		"draft": true, "alias": "staging", "message": "Try a new heading"})
	preview, _ := d["preview_url"].(string)
	if d["draft"] != true || preview == "" || d["alias_url"] != "http://staging--alice-site.sites.test/" ||
		!strings.Contains(text, "Saved a draft") || !strings.Contains(text, "check it at "+preview+", then make it live with promote") ||
		!strings.Contains(text, "Alias: http://staging--alice-site.sites.test/") {
		t.Fatalf("draft: %q %v", text, d)
	}
	if _, body := env.fetch(t, "http://alice-site.sites.test/"); body != before {
		t.Fatalf("the site changed with a draft: %q", body)
	}
	if _, body := env.fetch(t, preview); !strings.Contains(body, "draft one") {
		t.Fatalf("draft's preview: %q", body)
	}
	n := d["version"]

	text, vs := mustTool(t, cs, "list_versions", map[string]any{"id": idAliceSite})
	if versions, _ := vs["versions"].([]any); len(versions) != 2 ||
		!strings.Contains(text, ", preview "+preview+", aliases staging: Try a new heading") {
		t.Fatalf("versions: %q %v", text, vs)
	}

	text, p := mustTool(t, cs, "promote", map[string]any{"id": idAliceSite, "version": n})
	if p["version"] != n || !strings.Contains(text, "is live at http://alice-site.sites.test/") {
		t.Fatalf("promote: %q %v", text, p)
	}
	if _, body := env.fetch(t, "http://alice-site.sites.test/"); !strings.Contains(body, "draft one") {
		t.Fatalf("after promote: %q", body)
	}
	mustToolError(t, cs, "promote", map[string]any{"id": idAliceSite, "version": 99}, "HTTP 404")
	mustToolError(t, cs, "promote", map[string]any{"id": idAliceSite, "version": 0}, "version is required")

	anon := env.connect(t, "", "")
	mustToolError(t, anon, "deploy", map[string]any{"html": "<p>x</p>", "draft": true}, "draft needs an account")
}
