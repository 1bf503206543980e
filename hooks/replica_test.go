package hooks

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"sitedrop/sites/store/s3store/s3test"
)

func TestReplicaRequested(t *testing.T) {
	root := &cobra.Command{Use: "sitedrop"}
	serveCmd := &cobra.Command{Use: "serve"}
	userCmd := &cobra.Command{Use: "user"}
	root.AddCommand(serveCmd, userCmd)
	for _, c := range []struct {
		cmd  *cobra.Command
		args []string
		want bool
	}{
		{serveCmd, []string{"serve", "--replica", "--store", "s3://b"}, true},
		{serveCmd, []string{"--dir", "x", "serve", "--replica=true", "--http", ":80"}, true},
		{serveCmd, []string{"serve", "--primary", "http://10.0.0.2:8090", "--replica", "--store", "s3://b"}, true},
		{serveCmd, []string{"serve", "--http", ":80"}, false},
		{serveCmd, []string{"serve", "--replica=false"}, false},
		{userCmd, []string{"user", "--replica"}, false},
	} {
		if got := ReplicaRequested(c.cmd, c.args); got != c.want {
			t.Errorf("ReplicaRequested(%v) = %v", c.args, got)
		}
	}
}

// TestRunReplica runs `serve --replica` as the command does: it listens
// on --http, serves a published site there, and stops when its context
// ends.
func TestRunReplica(t *testing.T) {
	srv := s3test.Start(t)
	sd, done := s3App(t, srv)
	defer done()
	alice, _ := sd.app.FindAuthRecordByEmail("users", "alice@example.com")
	mustDeploy(t, sd, alice, "runrep000000001", "run-replica", "<h1>from the replica</h1>", "R")
	flush(t, sd)

	addr, out, stop := runReplicaCmd(t, sd, nil)
	req, _ := http.NewRequest(http.MethodGet, "http://"+addr+"/", nil)
	req.Host = "run-replica.sites.test"
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "from the replica") {
		t.Fatalf("%d %q", resp.StatusCode, body)
	}
	if err := stop(); err != nil {
		t.Fatalf("RunReplica: %v", err)
	}
	if !strings.Contains(out.String(), "replica serving") {
		t.Fatalf("banner: %q", out.String())
	}
}
