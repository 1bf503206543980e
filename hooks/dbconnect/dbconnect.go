// Package dbconnect opens PocketBase's SQLite databases as PocketBase's
// own DBConnect does (same driver, same pragmas), except that each
// connection keeps the statements it prepares (stmtcache).
package dbconnect

import (
	"database/sql"
	"fmt"
	"sync"

	"github.com/pocketbase/dbx"

	"sitedrop/hooks/internal/stmtcache"
)

// sqlitePragmas are those of PocketBase's core.DefaultDBConnect, in its
// order (busy_timeout first: it must hold before WAL mode is set), so
// that DBConnect changes how statements are prepared and nothing else
// (TestOpenPragmas compares them).
const sqlitePragmas = "?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=journal_size_limit(200000000)&_pragma=synchronous(NORMAL)&_pragma=foreign_keys(ON)&_pragma=temp_store(MEMORY)&_pragma=cache_size(-32000)"

// sqliteDriver is the SQLite driver PocketBase registers ("sqlite",
// modernc's, with any function registered on it), whose connections keep
// their statements.
var sqliteDriver = sync.OnceValues(func() (*stmtcache.Driver, error) {
	db, err := sql.Open("sqlite", "") // opens no connection: the registered driver
	if err != nil {
		return nil, fmt.Errorf("find the sqlite driver: %w", err)
	}
	defer db.Close()
	return &stmtcache.Driver{Inner: db.Driver()}, nil
})

// Open opens one of PocketBase's SQLite databases (its
// BaseAppConfig.DBConnect) as PocketBase's own does, with the same driver
// and pragmas, except that each connection keeps the statements it
// prepares (stmtcache): PocketBase's record layer and dbx send the same
// SQL text for the same query, which the driver otherwise parses anew
// every time (about a fifth of a one-page deploy's CPU, issue 32).
func Open(dbPath string) (*dbx.DB, error) {
	d, err := sqliteDriver()
	if err != nil {
		return nil, err
	}
	return dbx.NewFromDB(sql.OpenDB(d.Connector(dbPath+sqlitePragmas)), "sqlite"), nil
}

// Driver is the driver Open's databases use: its Prepared count tells a
// test how many statements were prepared.
func Driver() (*stmtcache.Driver, error) { return sqliteDriver() }
