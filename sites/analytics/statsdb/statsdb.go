// Package statsdb keeps the sites' analytics in the database: the
// site_stats collection, one row per deployment and UTC day, which the
// in-memory counts of package analytics are added to.
//
// The analytics job hands each minute's counts to a Flusher, which adds
// them to their rows one day at a time and keeps for the next flush what
// it could not write; the API and the site page read a period's report
// with Load; a daily job removes the rows older than KeepDays with Purge:
//
//	f := statsdb.NewFlusher(app, aggregator)
//	left := f.Flush(ctx) // every minute, and at shutdown
//
//	from, to, err := statsdb.ParsePeriod(q.Get("from"), q.Get("to"), time.Now())
//	report, err := statsdb.Load(app, deploymentID, from, to)
//
//	n, err := statsdb.Purge(app, time.Now()) // daily
//
// With replicas (an S3 store), the flush first merges the counts they
// ship through the store (WithReplicas, MergeReplicas: each delta added
// once, its key recorded in the same transaction in site_stats_deltas):
//
//	f := statsdb.NewFlusher(app, aggregator).WithReplicas(ship.NewInbox(s3), salts)
//
// It is apart from package analytics so that the counting, which runs on
// every answer of the site server (replicas included, which have no
// database), imports nothing but the standard library.
package statsdb

import "sitedrop/sites/analytics"

const (
	// KeepDays is how long a day's row is kept, and the longest period
	// a report covers.
	KeepDays = 400
	// TopLimit is how many entries each stored top list keeps, besides
	// analytics.Other, which counts the rest. With keys of
	// analytics.MaxKeyLen bytes at most, a list's JSON stays under
	// ListMaxJSON, whatever the keys.
	TopLimit = 100
	// ListMaxJSON is the most a stored top list can take as JSON: each
	// key byte is written as 6 bytes at worst (\u00XX for a control
	// character, \ufffd for a byte of invalid UTF-8, \u003c for <), and
	// an entry adds {"key":"","count":N}, with N of up to 20 bytes, and a
	// comma. It is under the lists' MaxSize (migrations/*_site_stats.go),
	// as a test checks.
	ListMaxJSON = 2 + (TopLimit+1)*(6*analytics.MaxKeyLen+len(`{"key":"","count":-9223372036854775808},`))
	// PendingLimit bounds the days a Flusher keeps in memory while the
	// database refuses its writes.
	PendingLimit = 10000
)
