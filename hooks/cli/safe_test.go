package cli

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"

	"sitedrop/hooks/internal/clitest"
	"sitedrop/sites"
)

// hostile is text a malicious server sends: terminal escape sequences
// (clear the screen, set the window title, C1 CSI) and a bidi override.
const hostile = "\x1b[2J\x1b]0;pwned\x07\u009b31m\u202e\r"

// TestCLIPrintsServerTextSafely: whatever a server sends (answers and
// error messages) reaches the terminal without control characters, from
// every client command.
func TestCLIPrintsServerTextSafely(t *testing.T) {
	clitest.CleanEnv(t)
	h := strings.ReplaceAll(strings.ReplaceAll(hostile, "\x1b", `\u001b`), "\x07", `\u0007`)
	h = strings.ReplaceAll(strings.ReplaceAll(h, "\u009b", `\u009b`), "\r", `\r`)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.Method == "GET" && r.URL.Path == "/deploys":
			w.Write([]byte(`{"deployments":[{"id":"id` + h + `","slug":"slug` + h + `","url":"http://x/` + h + `","title":"T\t` + h + `","updated_at":"now` + h + `"}]}`))
		case r.Method == "DELETE" && r.URL.Path == "/deploy/good":
			w.Write([]byte(`{"message":"deleted` + h + `"}`))
		case r.Method == "GET" && r.URL.Path == "/deploy/good/versions":
			w.Write([]byte(`{"versions":[{"version":1,"created_at":"` + h + `","file_count":1,"total_bytes":1,"live":true,"message":"m` + h + `","preview_url":"p` + h + `","aliases":["a` + h + `"]}]}`))
		case r.Method == "POST" && r.URL.Path == "/deploy/good/versions/2/promote":
			w.Write([]byte(`{"id":"good","slug":"s` + h + `","url":"u` + h + `","version":2}`))
		case r.Method == "GET" && r.URL.Path == "/deploy/good/aliases":
			w.Write([]byte(`{"aliases":[{"name":"n` + h + `","version":2,"url":"u` + h + `"}]}`))
		case r.Method == "DELETE" && r.URL.Path == "/deploy/good/aliases/staging":
			w.Write([]byte(`{"name":"staging","message":"deleted` + h + `"}`))
		case r.Method == "GET" && r.URL.Path == "/deploy/good/diff":
			w.Write([]byte(`{"from":1,"to":2,"added":[{"path":"a` + h + `","size":1}],"changed":[{"path":"c` + h + `","from_size":1,"to_size":2}],"removed":[{"path":"r` + h + `","size":1}]}`))
		case r.Method == "PUT" && r.URL.Path == "/deploy/good":
			w.Write([]byte(`{"id":"good","slug":"s","url":"u` + h + `","version":2,"draft":true,"preview_url":"p` + h + `","alias_url":"a` + h + `","warnings":[],"report":{}}`))
		case r.Method == "POST" && r.URL.Path == "/deploy/good/rename":
			w.Write([]byte(`{"id":"good","slug":"s` + h + `","url":"u` + h + `","previous_slug":"o","previous_url":"o` + h + `","redirect_until":"t` + h + `"}`))
		case r.Method == "POST" && r.URL.Path == "/deploy/good/pause":
			w.Write([]byte(`{"id":"good","slug":"s` + h + `","url":"u` + h + `","paused":true}`))
		case r.Method == "POST" && r.URL.Path == "/deploy/good/rollback":
			w.Write([]byte(`{"id":"good","slug":"s` + h + `","url":"u` + h + `","version":1}`))
		case r.Method == "POST" && r.URL.Path == "/deploy" && r.Header.Get("Authorization") != "":
			// a keyed deploy names its content: the server lacks it, and
			// then refuses the upload with a hostile error (the upload's
			// error is wrapped by the CLI before it is printed)
			w.WriteHeader(400)
			w.Write([]byte(`{"error":"content ` + sites.ContentMissingPhrase + `"}`))
		case r.Method == "POST" && r.URL.Path == "/blobs/missing":
			var req struct{ Hashes []string }
			json.NewDecoder(r.Body).Decode(&req)
			json.NewEncoder(w).Encode(map[string]any{"missing": req.Hashes})
		case r.Method == "PUT" && strings.HasPrefix(r.URL.Path, "/blobs/"):
			w.WriteHeader(400)
			w.Write([]byte(`{"error":"refused` + h + `"}`))
		case r.Method == "POST" && r.URL.Path == "/deploy":
			w.Write([]byte(`{"id":"i` + h + `","slug":"s` + h + `","url":"u` + h + `","claim_url":"c` + h + `","claim_token":"t","expires_at":"e` + h + `"}`))
		case r.Method == "POST" && r.URL.Path == "/auth/otp":
			w.WriteHeader(400)
			w.Write([]byte(`{"error":"no` + h + `"}`))
		case r.URL.Path == "/deploy/text":
			w.Header().Set("Content-Type", "text/plain")
			w.WriteHeader(500)
			w.Write([]byte("raw " + hostile))
		default:
			w.WriteHeader(404)
			w.Write([]byte(`{"error":"not found` + h + `"}`))
		}
	}))
	defer srv.Close()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "index.html"), []byte("<p>x</p>"), 0o644); err != nil {
		t.Fatal(err)
	}
	key := []string{"--server", srv.URL, "--key", keyAlice}
	runs := []struct {
		name    string
		out     func() (string, string, error)
		wantErr bool
	}{
		{"ls", func() (string, string, error) { return clitest.Run(t, newListCommand(), key...) }, false},
		{"rm", func() (string, string, error) { return clitest.Run(t, newRemoveCommand(), append(key, "good")...) }, false},
		{"versions", func() (string, string, error) { return clitest.Run(t, newVersionsCommand(), append(key, "good")...) }, false},
		{"rollback", func() (string, string, error) {
			return clitest.Run(t, newRollbackCommand(), append(key, "good", "1")...)
		}, false},
		{"promote", func() (string, string, error) {
			return clitest.Run(t, newPromoteCommand(), append(key, "good", "2")...)
		}, false},
		{"aliases", func() (string, string, error) { return clitest.Run(t, newAliasesCommand(), append(key, "good")...) }, false},
		{"rename", func() (string, string, error) {
			return clitest.Run(t, newRenameCommand(), append(key, "good", "new-name")...)
		}, false},
		{"pause", func() (string, string, error) { return clitest.Run(t, newPauseCommand(true), append(key, "good")...) }, false},
		{"aliases --delete", func() (string, string, error) {
			return clitest.Run(t, newAliasesCommand(), append(key, "--delete", "staging", "good")...)
		}, false},
		{"diff", func() (string, string, error) {
			return clitest.Run(t, newDiffCommand(), append(key, "good", "1", "2")...)
		}, false},
		{"draft deploy", func() (string, string, error) {
			return clitest.Run(t, newDeployCommand(), append(key, "--id", "good", "--draft", "--alias", "x", "--message", "m", dir)...)
		}, false},
		{"deploy", func() (string, string, error) {
			return clitest.Run(t, newDeployCommand(), "--server", srv.URL, dir)
		}, false},
		{"keyed deploy, upload refused", func() (string, string, error) {
			return clitest.Run(t, newDeployCommand(), append(key, dir)...)
		}, true},
		{"error answer", func() (string, string, error) { return clitest.Run(t, newRemoveCommand(), append(key, "bad")...) }, true},
		{"non-JSON error answer", func() (string, string, error) { return clitest.Run(t, newRemoveCommand(), append(key, "text")...) }, true},
		{"login error", func() (string, string, error) {
			return clitest.Run(t, newLoginCommand(), "--server", srv.URL, "a@example.com")
		}, true},
	}
	for _, r := range runs {
		out, errOut, err := r.out()
		if (err != nil) != r.wantErr {
			t.Errorf("%s: error %v, want one: %v", r.name, err, r.wantErr)
		}
		all := out + errOut
		if err != nil {
			all += "Error: " + err.Error() + "\n"
		}
		if !strings.Contains(all, `\x1b[2J`) {
			t.Errorf("%s: the server's text is not shown escaped: %q", r.name, all)
		}
		for _, c := range all {
			if c != '\n' && (unicode.IsControl(c) || isBidiOverride(c)) {
				t.Errorf("%s: printed %U from the server: %q", r.name, c, all)
				break
			}
		}
	}
}
