package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestGitSubject: a folder in a git work tree (or a folder under one)
// gives its checked-out commit's subject; no repository, a repository
// without a commit, or no git on PATH give none.
func TestGitSubject(t *testing.T) {
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git on PATH")
	}
	// no user's configuration, and no repository above the test's folder
	t.Setenv("GIT_CONFIG_GLOBAL", os.DevNull)
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	dir := t.TempDir()
	t.Setenv("GIT_CEILING_DIRECTORIES", filepath.Dir(dir))
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command(git, append([]string{"-C", dir, "-c", "user.name=T", "-c", "user.email=t@example.com"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	if got := gitSubject(dir); got != "" {
		t.Errorf("no repository: %q", got)
	}
	run("init", "-q")
	if got := gitSubject(dir); got != "" {
		t.Errorf("no commit yet: %q", got)
	}
	os.MkdirAll(filepath.Join(dir, "public"), 0o755)
	os.WriteFile(filepath.Join(dir, "public", "index.html"), []byte("<p>hi</p>"), 0o644)
	run("add", ".")
	run("commit", "-q", "-m", "Fix the header\u202e\tnow\n\nBody text")
	if got := gitSubject(dir); got != "Fix the header now" {
		t.Errorf("work tree: %q", got)
	}
	if got := gitSubject(filepath.Join(dir, "public")); got != "Fix the header now" {
		t.Errorf("folder in a work tree: %q", got)
	}
	t.Setenv("PATH", t.TempDir())
	if got := gitSubject(dir); got != "" {
		t.Errorf("no git on PATH: %q", got)
	}
}

// TestDeployMessage: a subject becomes a message the server takes.
func TestDeployMessage(t *testing.T) {
	long := strings.Repeat("é", 250)
	for in, want := range map[string]string{
		"  plain  ":     "plain",
		"a\tb\x01c":     "a b c",
		"\u202eevil":    "evil",
		"bad \xff byte": "bad  byte",
		long:            strings.Repeat("é", 199) + "…",
	} {
		if got := deployMessage(in); got != want {
			t.Errorf("deployMessage(%q) = %q, want %q", in, got, want)
		}
	}
}
