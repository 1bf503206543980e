package hooks

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"sitedrop/hooks/internal/clitest"
	"sitedrop/sites"
)

// TestCLIPreviews deploys with the real CLI to a real server: a live
// deploy whose message is the folder's git commit subject, a --draft
// with --alias and --message that prints its preview URL and leaves the
// site as it was, versions listing messages, previews and aliases, the
// diff of the two, promote making the draft live with its alias left in
// place, and the aliases listed and one deleted.
func TestCLIPreviews(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server")
	}
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git on PATH")
	}
	clitest.CleanEnv(t)
	addr := loopback(freePort(t))
	srv := startServe(t, copyData(t, templates.fixtures(t)), nil, addr, "--http", addr)
	server, port := "http://"+addr, ":"+strings.Split(addr, ":")[1]

	dir := t.TempDir()
	t.Setenv("GIT_CONFIG_GLOBAL", os.DevNull) // no signing or hooks of the machine's
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	t.Setenv("GIT_CEILING_DIRECTORIES", filepath.Dir(dir))
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run := func(args ...string) {
		cmd := exec.Command(git, append([]string{"-C", dir, "-c", "user.name=T", "-c", "user.email=t@example.com"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	write("index.html", "<p>one</p>")
	write("old.txt", "gone soon")
	run("init", "-q")
	run("add", ".")
	run("commit", "-q", "-m", "First page\n\nthe body is not the subject")

	deploy := func(args ...string) (string, string) {
		t.Helper()
		out, errOut, err := clitest.Run(t, cliCommand(t, "deploy"), append([]string{"--server", server, "--key", keyPia}, args...)...)
		if err != nil {
			t.Fatalf("deploy %v: %v\n%s", args, err, errOut)
		}
		return out, errOut
	}
	out, errOut := deploy("--slug", "cli-preview", dir)
	if want := "http://cli-preview.sites.test" + port + "/\n"; out != want {
		t.Errorf("deploy printed %q, want %q", out, want)
	}
	if want := "Preview of version 1: http://v1--cli-preview.sites.test" + port + "/\n"; !strings.Contains(errOut, want) {
		t.Errorf("deploy did not print %q: %q", want, errOut)
	}
	rec, err := srv.app.FindFirstRecordByData(sites.DeploymentsCollection, "slug", "cli-preview")
	if err != nil {
		t.Fatal(err)
	}
	id := rec.Id

	write("index.html", "<p>two, longer</p>")
	write("new.txt", "new")
	os.Remove(filepath.Join(dir, "old.txt"))
	out, errOut = deploy("--id", id, "--draft", "--alias", "staging", "--message", "Try the new page", dir)
	preview := "http://v2--cli-preview.sites.test" + port + "/"
	if out != preview+"\n" {
		t.Errorf("draft printed %q, want its preview URL %q", out, preview)
	}
	for _, want := range []string{"Alias: http://staging--cli-preview.sites.test" + port + "/\n", "sitedrop promote " + id + " 2\n"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("draft did not print %q: %q", want, errOut)
		}
	}
	if _, b := siteGetLive(t, server, "cli-preview.sites.test", "/"); b != "<p>one</p>" {
		t.Errorf("site after the draft: %q", b)
	}
	if _, b := siteGetLive(t, server, "v2--cli-preview.sites.test", "/"); b != "<p>two, longer</p>" {
		t.Errorf("draft's preview: %q", b)
	}

	out, _, err = clitest.Run(t, cliCommand(t, "versions"), "--server", server, "--key", keyPia, id)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 || !strings.Contains(lines[0], "MESSAGE") ||
		!strings.Contains(lines[1], "staging") || !strings.Contains(lines[1], preview) || !strings.HasSuffix(lines[1], "Try the new page") || strings.Contains(lines[1], "live") ||
		!strings.Contains(lines[2], "live") || !strings.HasSuffix(lines[2], "First page") {
		t.Errorf("versions:\n%s", out)
	}

	out, errOut, err = clitest.Run(t, cliCommand(t, "diff"), "--server", server, "--key", keyPia, id, "1", "2")
	if want := "+ new.txt (3 bytes)\n~ index.html (10 -> 18 bytes)\n- old.txt (9 bytes)\n"; err != nil || out != want {
		t.Errorf("diff: %v %q, want %q", err, out, want)
	}
	if !strings.Contains(errOut, "1 added, 1 changed, 1 removed") {
		t.Errorf("diff summary: %q", errOut)
	}

	out, _, err = clitest.Run(t, cliCommand(t, "promote"), "--server", server, "--key", keyPia, id, "2")
	if err != nil || out != "Version 2 of cli-preview is live: http://cli-preview.sites.test"+port+"/\n" {
		t.Fatalf("promote: %v %q", err, out)
	}
	if _, b := siteGetLive(t, server, "cli-preview.sites.test", "/"); b != "<p>two, longer</p>" {
		t.Errorf("site after promote: %q", b)
	}
	out, _, err = clitest.Run(t, cliCommand(t, "aliases"), "--server", server, "--key", keyPia, id)
	if want := "http://staging--cli-preview.sites.test" + port + "/"; err != nil || !strings.Contains(out, "ALIAS") || !strings.Contains(out, "staging  2        "+want) {
		t.Errorf("aliases: %v %q", err, out)
	}
	out, _, err = clitest.Run(t, cliCommand(t, "aliases"), "--server", server, "--key", keyPia, "--delete", "staging", id)
	if err != nil || out != "Alias staging of cli-preview deleted\n" {
		t.Errorf("aliases --delete: %v %q", err, out)
	}
	if code, _ := siteGetLive(t, server, "staging--cli-preview.sites.test", "/"); code != 404 {
		t.Errorf("the deleted alias answers %d", code)
	}
	if _, _, err := clitest.Run(t, cliCommand(t, "promote"), "--server", server, "--key", keyPia, id, "9"); err == nil || !strings.Contains(err.Error(), "HTTP 404") {
		t.Errorf("promote of a version not kept: %v", err)
	}
	if _, _, err := clitest.Run(t, cliCommand(t, "diff"), "--server", server, "--key", keyPia, id, "0", "2"); err == nil || !strings.Contains(err.Error(), "FROM must be a positive number") {
		t.Errorf("diff from 0: %v", err)
	}
	if _, _, err := clitest.Run(t, cliCommand(t, "deploy"), "--server", server, "--draft", dir); err == nil || !strings.Contains(err.Error(), "--draft: this needs an API key") {
		t.Errorf("anonymous draft: %v", err)
	}
}
