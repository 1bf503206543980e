package hooks

import (
	"strings"
	"testing"

	"sitedrop/hooks/internal/clitest"
)

// TestCLISiteControls renames, pauses and resumes a site with the real
// CLI against a real server on loopback; the server's refusals come
// back as errors.
func TestCLISiteControls(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server")
	}
	clitest.CleanEnv(t)
	addr := loopback(freePort(t))
	startServe(t, copyData(t, templates.fixtures(t)), nil, addr, "--http", addr)
	server, port := "http://"+addr, ":"+strings.Split(addr, ":")[1]
	run := func(name string, args ...string) (string, error) {
		t.Helper()
		out, _, err := clitest.Run(t, cliCommand(t, name), append([]string{"--server", server, "--key", keyAlice}, args...)...)
		return out, err
	}

	out, err := run("rename", idAliceSite, "alice-cli")
	if err != nil || !strings.HasPrefix(out, "Renamed: http://alice-cli.sites.test"+port+"/\nhttp://alice-site.sites.test"+port+"/ redirects there until ") {
		t.Fatalf("rename: %v %q", err, out)
	}
	if code, b := siteGetLive(t, server, "alice-cli.sites.test", "/"); code != 200 || !strings.Contains(b, "<h1>alice</h1>") {
		t.Fatalf("renamed site: %d %q", code, b)
	}
	if _, err := run("rename", idAliceSite, "bob-site"); err == nil || !strings.Contains(err.Error(), "Slug already taken") {
		t.Errorf("rename to a taken slug: %v", err)
	}
	out, err = run("pause", idAliceSite)
	if err != nil || out != "Paused: http://alice-cli.sites.test"+port+"/\n" {
		t.Fatalf("pause: %v %q", err, out)
	}
	if code, b := siteGetLive(t, server, "alice-cli.sites.test", "/"); code != 503 || !strings.Contains(b, "Site paused") {
		t.Fatalf("paused site: %d %q", code, b)
	}
	out, err = run("resume", idAliceSite)
	if err != nil || out != "Running: http://alice-cli.sites.test"+port+"/\n" {
		t.Fatalf("resume: %v %q", err, out)
	}
	if _, err := run("pause", idBobSite); err == nil || !strings.Contains(err.Error(), "HTTP 404") {
		t.Errorf("pause of another account's site: %v", err)
	}
}
