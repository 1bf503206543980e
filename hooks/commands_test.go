package hooks

import (
	"bytes"
	"strings"
	"testing"

	"sitedrop/hooks/admincmd"
	"sitedrop/sites/accounts"

	"github.com/spf13/cobra"
)

func run(t *testing.T, cmd *cobra.Command, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs(args)
	err := cmd.Execute()
	return out.String(), err
}

func TestUserAndKeyCommands(t *testing.T) {
	t.Parallel()
	app, _ := newBareApp(t)
	defer app.Cleanup()

	if out, err := run(t, admincmd.NewUserCommand(app), "create", "carol@example.com"); err != nil || !strings.Contains(out, "Created user carol@example.com (plan free") {
		t.Fatalf("user create: %v %q", err, out)
	}
	if out, err := run(t, admincmd.NewUserCommand(app), "create", "carol@example.com", "--plan", "pro"); err != nil || !strings.Contains(out, "Updated user carol@example.com (plan pro") {
		t.Fatalf("user create existing: %v %q", err, out)
	}
	if out, err := run(t, admincmd.NewUserCommand(app), "create", " Carol@Example.COM "); err != nil || !strings.Contains(out, "Updated user carol@example.com") {
		t.Fatalf("addresses are one account whatever their case: %v %q", err, out)
	}
	if _, err := run(t, admincmd.NewUserCommand(app), "create", "carol@example.com", "--plan", "gold"); err == nil {
		t.Fatal("unknown plan accepted")
	}
	if n, _ := app.CountRecords("users"); n != 1 {
		t.Fatalf("%d users, want 1", n)
	}

	out, err := run(t, admincmd.NewKeyCommand(app), "create", "carol@example.com", "--name", "ci")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	key := lines[len(lines)-1]
	if !strings.HasPrefix(key, accounts.APIKeyPrefix) || strings.Contains(key, " ") {
		t.Fatalf("last line is not the key alone: %q", key)
	}
	user, err := accounts.UserByAPIKey(app, key)
	if err != nil || user.Email() != "carol@example.com" {
		t.Fatalf("key does not authenticate: %v", err)
	}
	rec, _ := app.FindFirstRecordByData("api_keys", "hash", accounts.HashSecret(key))
	if rec == nil || strings.Contains(rec.GetString("prefix"), key[12:]) {
		t.Fatal("key must be stored as a hash with a short display prefix")
	}

	out, err = run(t, admincmd.NewKeyCommand(app), "list", "carol@example.com")
	if err != nil || !strings.Contains(out, key[:11]) || !strings.Contains(out, "ci") || strings.Contains(out, key) {
		t.Fatalf("key list: %v %q", err, out)
	}

	if _, err := run(t, admincmd.NewKeyCommand(app), "create", "nobody@example.com"); err == nil {
		t.Fatal("key for an unknown user")
	}
	if _, err := run(t, admincmd.NewKeyCommand(app), "revoke", "sd_nothere"); err == nil {
		t.Fatal("revoking an unknown prefix succeeded")
	}
	if out, err := run(t, admincmd.NewKeyCommand(app), "revoke", key[:11]); err != nil || !strings.Contains(out, "Revoked") {
		t.Fatalf("revoke: %v %q", err, out)
	}
	if _, err := accounts.UserByAPIKey(app, key); err == nil {
		t.Fatal("revoked key still works")
	}
}
