package hooks

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"sitedrop/hooks/internal/clitest"
)

// TestMCPStdioAgainstRealServer runs `sitedrop mcp` with a saved login
// and drives it over its stdin and stdout with the SDK's client, against
// a real server on loopback; the same server's /mcp (in process, the
// server's own handler) answers the same tools.
func TestMCPStdioAgainstRealServer(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server")
	}
	config := clitest.CleanEnv(t)
	addr := loopback(freePort(t))
	startServe(t, copyData(t, templates.fixtures(t)), nil, addr, "--http", addr)
	server := "http://" + addr
	// the saved login, as `sitedrop login` leaves it (see TestCLILogin)
	saved, _ := json.Marshal(map[string]string{"server": server, "key": keyAlice})
	os.MkdirAll(filepath.Join(config, "sitedrop"), 0o700)
	if err := os.WriteFile(filepath.Join(config, "sitedrop", "credentials.json"), saved, 0o600); err != nil {
		t.Fatal(err)
	}

	inR, inW := io.Pipe()   // the agent's requests: the command's stdin
	outR, outW := io.Pipe() // the command's stdout
	cmd := cliCommand(t, "mcp")
	cmd.SetIn(inR)
	cmd.SetOut(outW)
	cmd.SetErr(io.Discard)
	cmd.SetArgs([]string{})
	done := make(chan error, 1)
	go func() { done <- cmd.Execute(); outW.Close() }()

	ctx := context.Background()
	c := mcp.NewClient(&mcp.Implementation{Name: "sitedrop-test", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if text, _ := mustTool(t, cs, "whoami", map[string]any{}); !strings.Contains(text, "alice@example.com") {
		t.Fatalf("whoami with the saved login's key: %q", text)
	}
	_, dep := mustTool(t, cs, "deploy", map[string]any{"html": "<!doctype html><h1>Over stdio</h1>", "slug": "stdio-site"})
	u, _ := url.Parse(dep["url"].(string))
	if code, body := siteGetLive(t, server, u.Host, "/"); code != 200 || !strings.Contains(body, "Over stdio") {
		t.Fatalf("site: %d %q", code, body)
	}
	mustToolError(t, cs, "get_status", map[string]any{"id": "nosuchsite0000"}, "HTTP 404")

	// the real server's /mcp: the tools call its own handler in process
	hs, err := c.Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint: server + "/mcp", HTTPClient: &http.Client{Transport: withKey{keyAlice}},
		DisableStandaloneSSE: true, MaxRetries: -1,
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer hs.Close()
	if text, list := mustTool(t, hs, "list_deploys", map[string]any{}); !strings.Contains(text, "stdio-site") {
		t.Fatalf("list over /mcp: %q %v", text, list)
	}

	// closing stdin ends the command cleanly
	cs.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("sitedrop mcp: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("sitedrop mcp did not end when stdin closed")
	}
}
