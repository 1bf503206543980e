// Package stmtcache wraps a database/sql driver so that each connection
// keeps the statements it has prepared and runs them again instead of
// parsing their SQL anew.
//
// database/sql hands a query that is not a prepared statement to the
// driver's connection (ExecContext, QueryContext), and modernc's SQLite
// driver prepares it, runs it and finalizes it: every query is parsed and
// planned again, about a fifth of a one-page deploy's CPU (issue 32).
// PocketBase's record layer and dbx build the same SQL text for the same
// shape of query (the values are bound, not written into it), so a
// connection that keeps its prepared statements by their text parses each
// once. A kept statement is reset and its bindings cleared after each
// use (modernc's statement does both), so nothing of one query reaches
// the next, and SQLite prepares it again by itself when the schema
// changes (sqlite3_prepare_v2), so a migration or a collection edit needs
// nothing from here.
//
// A statement still in use (its rows open, as when a transaction reads
// while it walks another query's rows with the same text) is not shared:
// the second query runs unkept, as without this package. A statement
// whose run failed is dropped. Each connection keeps at most Size
// statements, the least recently used dropped first.
package stmtcache

import (
	"container/list"
	"context"
	"database/sql/driver"
	"errors"
	"reflect"
	"sync/atomic"
)

// DefaultSize is the number of statements a connection keeps when
// Driver.Size is zero.
const DefaultSize = 64

// Driver is a driver.Driver whose connections keep their statements.
type Driver struct {
	// Inner is the SQLite driver wrapped. Its connections must implement
	// driver.ConnPrepareContext, and prepared statements
	// driver.StmtExecContext and driver.StmtQueryContext (modernc's do).
	Inner driver.Driver
	// Size is the most statements one connection keeps (0: DefaultSize).
	Size int

	prepared atomic.Int64
}

// Prepared is the number of statements the wrapped connections have
// prepared (kept or not) since the driver was made: what the cache saves
// shows as this number no longer growing with the queries run.
func (d *Driver) Prepared() int64 { return d.prepared.Load() }

// Open opens a connection of the inner driver, with its statement cache.
func (d *Driver) Open(name string) (driver.Conn, error) {
	c, err := d.Inner.Open(name)
	if err != nil {
		return nil, err
	}
	prep, ok := c.(driver.ConnPrepareContext)
	if !ok {
		c.Close()
		return nil, errors.New("stmtcache: the inner driver's connection does not implement ConnPrepareContext")
	}
	size := d.Size
	if size <= 0 {
		size = DefaultSize
	}
	return &conn{Conn: c, prep: prep, d: d, size: size, byText: map[string]*list.Element{}, lru: list.New()}, nil
}

// Connector is a driver.Connector of d for the data source name dsn, for
// sql.OpenDB.
func (d *Driver) Connector(dsn string) driver.Connector { return connector{d, dsn} }

type connector struct {
	d   *Driver
	dsn string
}

func (c connector) Connect(context.Context) (driver.Conn, error) { return c.d.Open(c.dsn) }
func (c connector) Driver() driver.Driver                        { return c.d }

// entry is a kept statement.
type entry struct {
	text string
	stmt driver.Stmt
	// busy: its rows are open; dropped: it left the cache meanwhile and
	// is closed when its rows are.
	busy, dropped bool
}

// conn is a connection with its kept statements. database/sql never uses
// one connection from two goroutines at once (rows included), so it needs
// no lock of its own.
type conn struct {
	driver.Conn
	prep   driver.ConnPrepareContext
	d      *Driver
	size   int
	byText map[string]*list.Element // of *entry
	lru    *list.List               // front: most recently used
}

// prepare prepares query on the inner connection, counted.
func (c *conn) prepare(ctx context.Context, query string) (driver.Stmt, error) {
	c.d.prepared.Add(1)
	return c.prep.PrepareContext(ctx, query)
}

// take returns the kept statement of query, prepared and kept if it was
// not, marked busy; nil when the kept one is busy (the caller runs query
// unkept).
func (c *conn) take(ctx context.Context, query string) (*entry, error) {
	if el, ok := c.byText[query]; ok {
		e := el.Value.(*entry)
		if e.busy {
			return nil, nil
		}
		c.lru.MoveToFront(el)
		e.busy = true
		return e, nil
	}
	s, err := c.prepare(ctx, query)
	if err != nil {
		return nil, err
	}
	e := &entry{text: query, stmt: s, busy: true}
	c.byText[query] = c.lru.PushFront(e)
	for c.lru.Len() > c.size {
		c.drop(c.lru.Back())
	}
	return e, nil
}

// drop takes el out of the cache, closing its statement unless its rows
// are open (then release closes it).
func (c *conn) drop(el *list.Element) {
	e := el.Value.(*entry)
	c.lru.Remove(el)
	delete(c.byText, e.text)
	e.dropped = true
	if !e.busy {
		e.stmt.Close()
	}
}

// release ends a use of e; failed drops it (a statement whose run failed
// is not trusted again).
func (c *conn) release(e *entry, failed bool) {
	e.busy = false
	if failed && !e.dropped {
		if el, ok := c.byText[e.text]; ok && el.Value == e {
			c.drop(el)
			return
		}
	}
	if e.dropped {
		e.stmt.Close()
	}
}

// ExecContext runs query with its kept statement.
func (c *conn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	e, err := c.take(ctx, query)
	if err != nil {
		return nil, err
	}
	if e == nil {
		return c.execOnce(ctx, query, args)
	}
	res, err := e.stmt.(driver.StmtExecContext).ExecContext(ctx, args)
	c.release(e, err != nil)
	return res, err
}

// execOnce runs query with a statement of its own, closed after.
func (c *conn) execOnce(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	s, err := c.prepare(ctx, query)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	return s.(driver.StmtExecContext).ExecContext(ctx, args)
}

// QueryContext runs query with its kept statement, busy until its rows are
// closed.
func (c *conn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	e, err := c.take(ctx, query)
	if err != nil {
		return nil, err
	}
	if e == nil {
		return c.queryOnce(ctx, query, args)
	}
	r, err := e.stmt.(driver.StmtQueryContext).QueryContext(ctx, args)
	if err != nil {
		c.release(e, true)
		return nil, err
	}
	return &rows{Rows: r, done: func(failed bool) { c.release(e, failed) }}, nil
}

// queryOnce runs query with a statement of its own, closed with its rows.
func (c *conn) queryOnce(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	s, err := c.prepare(ctx, query)
	if err != nil {
		return nil, err
	}
	r, err := s.(driver.StmtQueryContext).QueryContext(ctx, args)
	if err != nil {
		s.Close()
		return nil, err
	}
	return &rows{Rows: r, done: func(bool) { s.Close() }}, nil
}

// PrepareContext prepares a statement the caller owns (dbx's Prepare), not
// kept.
func (c *conn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	return c.prepare(ctx, query)
}

// Prepare is PrepareContext without a context.
func (c *conn) Prepare(query string) (driver.Stmt, error) {
	return c.prepare(context.Background(), query)
}

// BeginTx begins a transaction on the inner connection.
func (c *conn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	if b, ok := c.Conn.(driver.ConnBeginTx); ok {
		return b.BeginTx(ctx, opts)
	}
	return c.Conn.Begin() //nolint:staticcheck // the inner driver has no BeginTx
}

// ResetSession is the inner connection's, if it has one.
func (c *conn) ResetSession(ctx context.Context) error {
	if r, ok := c.Conn.(driver.SessionResetter); ok {
		return r.ResetSession(ctx)
	}
	return nil
}

// IsValid is the inner connection's, if it has one.
func (c *conn) IsValid() bool {
	if v, ok := c.Conn.(driver.Validator); ok {
		return v.IsValid()
	}
	return true
}

// Ping is the inner connection's, if it has one.
func (c *conn) Ping(ctx context.Context) error {
	if p, ok := c.Conn.(driver.Pinger); ok {
		return p.Ping(ctx)
	}
	return nil
}

// Close closes the kept statements, then the connection: SQLite keeps a
// connection with statements left open alive.
func (c *conn) Close() error {
	for el := c.lru.Front(); el != nil; el = el.Next() {
		el.Value.(*entry).stmt.Close()
	}
	c.byText, c.lru = nil, list.New()
	return c.Conn.Close()
}

// rows are a query's rows; done runs once, when they are closed, told
// whether the run failed.
type rows struct {
	driver.Rows
	done func(failed bool)
}

// Close closes the inner rows. Their Close resets the statement, which
// answers the error of its last step: a run that failed while its rows
// were read (a step's error, SQLITE_BUSY say) fails the Close, and the
// statement is dropped as one whose Exec failed is.
func (r *rows) Close() error {
	err := r.Rows.Close()
	if r.done != nil {
		r.done(err != nil)
		r.done = nil
	}
	return err
}

// The column type methods of the inner rows, which database/sql's
// ColumnTypes asks for.

func (r *rows) ColumnTypeDatabaseTypeName(i int) string {
	if t, ok := r.Rows.(driver.RowsColumnTypeDatabaseTypeName); ok {
		return t.ColumnTypeDatabaseTypeName(i)
	}
	return ""
}

func (r *rows) ColumnTypeLength(i int) (int64, bool) {
	if t, ok := r.Rows.(driver.RowsColumnTypeLength); ok {
		return t.ColumnTypeLength(i)
	}
	return 0, false
}

func (r *rows) ColumnTypeNullable(i int) (bool, bool) {
	if t, ok := r.Rows.(driver.RowsColumnTypeNullable); ok {
		return t.ColumnTypeNullable(i)
	}
	return false, false
}

func (r *rows) ColumnTypePrecisionScale(i int) (int64, int64, bool) {
	if t, ok := r.Rows.(driver.RowsColumnTypePrecisionScale); ok {
		return t.ColumnTypePrecisionScale(i)
	}
	return 0, 0, false
}

func (r *rows) ColumnTypeScanType(i int) reflect.Type {
	if t, ok := r.Rows.(driver.RowsColumnTypeScanType); ok {
		return t.ColumnTypeScanType(i)
	}
	return reflect.TypeFor[any]()
}
