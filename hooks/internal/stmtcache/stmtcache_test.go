package stmtcache

import (
	"database/sql"
	"path/filepath"
	"testing"

	_ "modernc.org/sqlite"
)

// open opens a SQLite database in a temporary dir through a Driver of
// size n (0: the default) over modernc's, on one connection (as
// PocketBase's writer pool is).
func open(t *testing.T, n int) (*sql.DB, *Driver) {
	t.Helper()
	reg, err := sql.Open("sqlite", "")
	if err != nil {
		t.Fatal(err)
	}
	d := &Driver{Inner: reg.Driver(), Size: n}
	reg.Close()
	db := sql.OpenDB(d.Connector(filepath.Join(t.TempDir(), "t.db") + "?_pragma=journal_mode(WAL)"))
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	mustExec(t, db, "CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT UNIQUE)")
	return db, d
}

func mustExec(t *testing.T, db *sql.DB, q string, args ...any) {
	t.Helper()
	if _, err := db.Exec(q, args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

func count(t *testing.T, db *sql.DB) int {
	t.Helper()
	var n int
	if err := db.QueryRow("SELECT COUNT(*) FROM t WHERE v != ?", "").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestPreparedOnce: the same SQL text, run again with other values, is
// prepared once per connection, and each run sees its own values.
func TestPreparedOnce(t *testing.T) {
	db, d := open(t, 0)
	before := d.Prepared()
	for i := range 50 {
		mustExec(t, db, "INSERT INTO t (v) VALUES (?)", string(rune('a'+i%26))+string(rune('a'+i/26)))
		if got := count(t, db); got != i+1 {
			t.Fatalf("after %d inserts, %d rows", i+1, got)
		}
	}
	if got := d.Prepared() - before; got != 2 {
		t.Errorf("100 runs of 2 statements prepared %d statements, want 2", got)
	}
}

// TestSameTextWhileRowsOpen: a query run again while the rows of the
// same text are still open (a transaction reading while it walks rows)
// gets a statement of its own, and both give their own rows.
func TestSameTextWhileRowsOpen(t *testing.T) {
	db, d := open(t, 0)
	for _, v := range []string{"a", "b", "c"} {
		mustExec(t, db, "INSERT INTO t (v) VALUES (?)", v)
	}
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	const q = "SELECT v FROM t WHERE v >= ? ORDER BY v"
	outer, err := tx.Query(q, "a")
	if err != nil {
		t.Fatal(err)
	}
	before := d.Prepared()
	var got []string
	for outer.Next() {
		var v string
		if err := outer.Scan(&v); err != nil {
			t.Fatal(err)
		}
		var inner string
		if err := tx.QueryRow(q, v).Scan(&inner); err != nil { // the same text, busy
			t.Fatal(err)
		}
		got = append(got, v+inner)
	}
	if err := outer.Close(); err != nil {
		t.Fatal(err)
	}
	if want := "aa bb cc"; join(got) != want {
		t.Errorf("got %q, want %q", join(got), want)
	}
	if n := d.Prepared() - before; n != 3 {
		t.Errorf("the inner queries prepared %d statements, want 3 (one each: the kept one was busy)", n)
	}
	// free again: kept
	before = d.Prepared()
	var v string
	if err := tx.QueryRow(q, "b").Scan(&v); err != nil || v != "b" {
		t.Fatalf("got %q, %v", v, err)
	}
	if n := d.Prepared() - before; n != 0 {
		t.Errorf("the kept statement, free again, was prepared anew (%d)", n)
	}
}

func join(s []string) string {
	out := ""
	for i, v := range s {
		if i > 0 {
			out += " "
		}
		out += v
	}
	return out
}

// TestEvicted: past Size statements the least recently used is closed,
// even one whose rows are open (closed when they are), and every query
// still answers.
func TestEvicted(t *testing.T) {
	db, d := open(t, 2)
	mustExec(t, db, "INSERT INTO t (v) VALUES ('x')")
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	open, err := tx.Query("SELECT v FROM t") // kept, busy
	if err != nil {
		t.Fatal(err)
	}
	for i, q := range []string{"SELECT 1", "SELECT 2", "SELECT 3", "SELECT 1"} { // evicts the busy one
		var n int
		if err := tx.QueryRow(q).Scan(&n); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		if want := []int{1, 2, 3, 1}[i]; n != want {
			t.Fatalf("%s: %d", q, n)
		}
	}
	if !open.Next() {
		t.Fatal("the evicted statement's rows lost their row")
	}
	var v string
	if err := open.Scan(&v); err != nil || v != "x" {
		t.Fatalf("got %q, %v", v, err)
	}
	if err := open.Close(); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	before := d.Prepared()
	if count(t, db) != 1 {
		t.Fatal("wrong count")
	}
	if d.Prepared()-before != 1 {
		t.Error("the count's statement was kept past Size")
	}
}

// TestFailedDropped: a statement whose run failed (a unique constraint)
// is not reused, and the next run of its text works.
func TestFailedDropped(t *testing.T) {
	db, d := open(t, 0)
	const ins = "INSERT INTO t (v) VALUES (?)"
	mustExec(t, db, ins, "a")
	if _, err := db.Exec(ins, "a"); err == nil {
		t.Fatal("a duplicate was inserted")
	}
	before := d.Prepared()
	mustExec(t, db, ins, "b")
	if d.Prepared()-before != 1 {
		t.Error("the failed statement was kept")
	}
	if count(t, db) != 2 {
		t.Error("wrong count")
	}
}

// TestFailedWhileReadDropped: a query whose run fails while its rows
// are read (a step's error on the second row) is not kept, as one whose
// Exec failed is not, and the next run of its text works.
func TestFailedWhileReadDropped(t *testing.T) {
	db, d := open(t, 0)
	mustExec(t, db, "INSERT INTO t (v) VALUES ('{}'), ('bad')")
	const q = "SELECT json(v) FROM t WHERE v >= ? ORDER BY v DESC" // '{}', then 'bad'
	run := func(from string) error {
		rows, err := db.Query(q, from)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
		}
		return rows.Err()
	}
	if err := run("{"); err != nil {
		t.Fatalf("a good run: %v", err)
	}
	if err := run(""); err == nil {
		t.Fatal("json('bad') did not fail")
	}
	before := d.Prepared()
	if err := run("{"); err != nil {
		t.Fatalf("the run after the failed one: %v", err)
	}
	if n := d.Prepared() - before; n != 1 {
		t.Errorf("the run after a failed one prepared %d statements, want 1 (the failed one dropped)", n)
	}
}

// TestSchemaChange: a kept "SELECT *" sees a column added after it was
// prepared (SQLite prepares it again by itself).
func TestSchemaChange(t *testing.T) {
	db, _ := open(t, 0)
	mustExec(t, db, "INSERT INTO t (v) VALUES ('a')")
	cols := func() int {
		rows, err := db.Query("SELECT * FROM t")
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		c, err := rows.Columns()
		if err != nil {
			t.Fatal(err)
		}
		return len(c)
	}
	if n := cols(); n != 2 {
		t.Fatalf("%d columns", n)
	}
	mustExec(t, db, "ALTER TABLE t ADD COLUMN w TEXT DEFAULT 'z'")
	if n := cols(); n != 3 {
		t.Errorf("after ALTER TABLE, the kept SELECT * gives %d columns, want 3", n)
	}
}

// TestRollback: what a kept statement wrote in a transaction rolled back
// is gone, and the statement still works after.
func TestRollback(t *testing.T) {
	db, _ := open(t, 0)
	const ins = "INSERT INTO t (v) VALUES (?)"
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ins, "a"); err != nil {
		t.Fatal(err)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if count(t, db) != 0 {
		t.Fatal("a rolled back insert is there")
	}
	mustExec(t, db, ins, "a")
	if count(t, db) != 1 {
		t.Fatal("the kept insert did not insert")
	}
}
