package hooks

import (
	"strings"
	"testing"
)

// TestMCPProtection: deploy and update take password and protect, and
// the answer tells the share link.
func TestMCPProtection(t *testing.T) {
	t.Parallel()
	env := newMCPEnv(t)
	cs := env.connect(t, keyAlice, "")

	text, dep := mustTool(t, cs, "deploy", map[string]any{
		"html": "<p>agent secret</p>", "slug": "agent-private", "password": "agent password", "protect": "on",
	})
	share, _ := dep["share_url"].(string)
	if !strings.Contains(share, "?_token=") || !strings.Contains(text, "share link can open it: "+share) {
		t.Fatalf("deploy: %q %v", text, dep)
	}
	if code, body := env.fetch(t, dep["url"].(string)); code != 401 || strings.Contains(body, "agent secret") {
		t.Fatalf("protected site: %d", code)
	}
	id := dep["id"].(string)
	_, st := mustTool(t, cs, "get_status", map[string]any{"id": id})
	if st["protected"] != true {
		t.Fatalf("status: %v", st)
	}

	mustToolError(t, cs, "update", map[string]any{"id": id, "html": "<p>x</p>", "password": "short"}, "password must be 8 to 128 characters")

	text, up := mustTool(t, cs, "update", map[string]any{"id": id, "html": "<p>public</p>", "password": "", "protect": "off"})
	if up["share_url"] != nil || strings.Contains(text, "share link") {
		t.Fatalf("update: %q %v", text, up)
	}
	if code, _ := env.fetch(t, dep["url"].(string)); code != 200 {
		t.Fatalf("public again: %d", code)
	}
}
