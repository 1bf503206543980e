package dbconnect

import (
	"path/filepath"
	"testing"

	"github.com/pocketbase/dbx"
	"github.com/pocketbase/pocketbase/core"
)

// TestOpenPragmas: Open opens a database with the settings of
// PocketBase's own DBConnect (journal, sync, locks, cache), so keeping
// statements changes nothing else.
func TestOpenPragmas(t *testing.T) {
	dir := t.TempDir()
	read := func(db *dbx.DB) map[string]string {
		t.Helper()
		defer db.Close()
		out := map[string]string{}
		for _, p := range []string{"busy_timeout", "journal_mode", "journal_size_limit", "synchronous", "foreign_keys", "temp_store", "cache_size"} {
			var v string
			if err := db.NewQuery("PRAGMA " + p).Row(&v); err != nil {
				t.Fatalf("PRAGMA %s: %v", p, err)
			}
			out[p] = v
		}
		return out
	}
	pb, err := core.DefaultDBConnect(filepath.Join(dir, "pb.db"))
	if err != nil {
		t.Fatal(err)
	}
	ours, err := Open(filepath.Join(dir, "ours.db"))
	if err != nil {
		t.Fatal(err)
	}
	want, got := read(pb), read(ours)
	for p, v := range want {
		if got[p] != v {
			t.Errorf("PRAGMA %s = %s, PocketBase's is %s", p, got[p], v)
		}
	}
	if want["journal_mode"] != "wal" || want["synchronous"] != "1" {
		t.Errorf("PocketBase's pragmas are not what this test expects: %v", want)
	}
}
