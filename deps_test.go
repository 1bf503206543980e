package main

import (
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// depsRules is the import policy of the module's packages: the layering
// that keeps sitedrop a house, written in the language of Go's own
// src/go/build/deps_test.go (internal/dag):
//
//	a, b < c;    c may import a and b, and whatever they may import
//	a < b < c;   the same as a < b; b < c;
//	NONE < c;    c may import no package of the module
//	a !< b;      b must never import a, not even through another package
//	# ...        a comment, to the end of the line
//
// A package is defined once, on the right of a "<", after every package
// it builds on: the rules read from the bottom layer up, so they cannot
// hold a cycle, and no package may import one that builds on it. In a
// "!<" rule a name ending in "/..." stands for that package and every
// package under it, and a name may be a package that does not exist yet:
// the rule holds from the day it appears (TestDependencies fails until a
// new package is placed here).
//
// Only imports between the module's own packages are ruled here; what may
// import PocketBase is pocketBaseImporters', and what imports the standard
// library alone is stdlibOnly's.
//
// This is a statement of architecture, not a record of what the code
// happens to import: relax a rule only on purpose, and say why in the
// commit. The "!<" rules at the end are the architecture's own rules:
// they are not to be removed.
var depsRules = `
	# The wire: the JSON bodies of the HTTP API, once. The server, the
	# client and the API's description (hooks' drift test) share it, so
	# it stands below all of them and imports nothing of ours.
	NONE < sitedrop/sites/wire;

	# The bottom layer: packages that import nothing of the module.
	#   sites/store        the blob store interface every backend meets.
	#   sites/ratelimit,   counters the serving path feeds; they know
	#   sites/analytics    nothing of what they count.
	#   sites/accounts     keys, codes and sessions, on PocketBase alone.
	#   sites/audit        the audit log, on PocketBase alone, so that
	#                      every part can write to it.
	#   ui                 components render the props they are given;
	#                      they never fetch what they show.
	#   migrations         schema changes, run by PocketBase's runner: they
	#                      use no code of ours, so changing the code never
	#                      changes what an applied migration did.
	#   bench/*            tools that drive a server from outside.
	#   s3test             an S3 server (versitygw) for tests.
	#   hooks/internal/clitest  runs a client command in a test: shared by
	#                      the client's tests and the server's, it needs
	#                      only cobra.
	#   sites/safetext     text from elsewhere made safe for a terminal or
	#                      a log: it trusts nothing, so it needs nothing.
	#   hooks/internal/lifecycle  background services started together,
	#                      stopped in reverse within bounded waits: it
	#                      knows nothing of what they are.
	#   hooks/internal/routectx  what the route middlewares leave for their
	#                      handler, once for the API and the pages.
	#   hooks/internal/stmtcache  a database/sql driver wrapper whose
	#                      connections keep their prepared statements: it
	#                      knows SQL text, not what it asks.
	NONE
	< sitedrop/sites/store,
	  sitedrop/sites/ratelimit,
	  sitedrop/sites/analytics,
	  sitedrop/sites/accounts,
	  sitedrop/sites/audit,
	  sitedrop/ui,
	  sitedrop/migrations,
	  sitedrop/bench/deploybench,
	  sitedrop/bench/genfiles,
	  sitedrop/bench/tlsconns,
	  sitedrop/sites/store/s3store/s3test,
	  sitedrop/hooks/internal/clitest,
	  sitedrop/sites/safetext,
	  sitedrop/hooks/internal/lifecycle,
	  sitedrop/hooks/internal/routectx,
	  sitedrop/hooks/internal/stmtcache;

	# On the wire alone:
	#   sites/rules        a site's _redirects and _headers: parsed from
	#                      untrusted files, fuzzed on its own; the
	#                      warnings it finds are the wire's, which a
	#                      deploy's answer carries as they are.
	#   sites/client       the HTTP API seen from outside: it shares only
	#                      the wire with the server.
	sitedrop/sites/wire
	< sitedrop/sites/rules,
	  sitedrop/sites/client;

	# Other stores implement sites/store's BlobStore, and its contract
	# test (storetest) runs against each of them.
	sitedrop/sites/store
	< sitedrop/sites/store/s3store,
	  sitedrop/sites/store/storetest;

	# sites: a deployed site and its deployment, built on where its content
	# is kept, who owns it and the rules it carries.
	sitedrop/sites/accounts,
	sitedrop/sites/rules,
	sitedrop/sites/store
	< sitedrop/sites;

	# What belongs to a deployment: its custom domains (their service
	# limits the DNS questions the server asks: ratelimit), and what its
	# visitors send (sites/forms, below intake).
	sitedrop/sites,
	sitedrop/sites/ratelimit
	< sitedrop/sites/domains;

	# What clients send, before it reaches a service: bodies read within a
	# limit, a minimum rate and a memory budget; the deploy request (JSON
	# or an archive) and its checks; a deploy's work budget; the deploy
	# gate (its rate limits and slots). It reads net/http's request, free
	# of routing and of PocketBase: its refusals are domain errors that
	# the bindings answer.
	sitedrop/sites,
	sitedrop/sites/ratelimit
	< sitedrop/sites/intake;

	# What a deployment's visitors send: a form post is read within
	# intake's body guards and refused with intake's refusals (a body too
	# large, malformed), so that every body a client sends is answered
	# alike.
	sitedrop/sites/intake
	< sitedrop/sites/forms;

	# Abuse reports (issue 31): a reported URL names the deployment it
	# serves as the front door would (a site host, a preview, a custom
	# domain's route).
	sitedrop/sites,
	sitedrop/sites/domains
	< sitedrop/sites/abuse;

	# The hot path: from a Site to its bytes, counting each answer and
	# limiting the gate's attempts on the way.
	sitedrop/sites,
	sitedrop/sites/analytics,
	sitedrop/sites/ratelimit
	< sitedrop/sites/serve;

	# The analytics' store: the daily rows of site_stats, which the
	# in-memory counts are added to, one per deployment and day. It is a
	# package of its own, apart from sites/analytics, so that the counting
	# the hot path calls on every answer (replicas included, which have no
	# database) stays free of PocketBase: the store builds on the counts,
	# never the other way.
	# The replicas' analytics travel through the object store: each
	# replica's counts as delta objects, and the day's visitor salt that
	# every node shares. No database, so a replica can ship.
	sitedrop/sites/analytics,
	sitedrop/sites/store/s3store
	< sitedrop/sites/analytics/ship;

	sitedrop/sites,
	sitedrop/sites/analytics/ship
	< sitedrop/sites/analytics/statsdb;

	# Usage (issue 31): an account's sites and storage (sites) and what
	# they served (statsdb's rows), beside its plan's limits.
	sitedrop/sites/analytics/statsdb
	< sitedrop/sites/usage;

	# The report resolves a link exactly as the site server resolves a
	# request (serve's Checker).
	sitedrop/sites/serve
	< sitedrop/sites/report;

	# Replicas: the primary publishes each site's state to the object
	# store; a replica reads it and serves through the same server.
	sitedrop/sites,
	sitedrop/sites/store/s3store
	< sitedrop/sites/publish;

	sitedrop/sites/publish,
	sitedrop/sites/serve
	< sitedrop/sites/replica;

	# The MCP tools call the HTTP API through the client, as any agent
	# would, so they meet the API's limits and errors exactly.
	sitedrop/sites/client
	< sitedrop/sites/agent;

	# TLS: which hosts may have a certificate (sites), and the answer to a
	# malformed Host (serve).
	sitedrop/sites/serve
	< sitedrop/hooks/server/certs;

	# Metrics: the Prometheus collectors of every part, on a private
	# registry, served on --metrics' own listener. It implements the small
	# counting interfaces the parts define (serve's CacheCounter, store's
	# ErrorCounter), so it builds on them and they never import
	# Prometheus: the hot path counts through an interface, and sites/
	# stays free of the exporter. The front door (hooks/server) and the
	# bindings (hooks) hand it their events.
	sitedrop/sites/serve,
	sitedrop/sites/store
	< sitedrop/hooks/server/metrics;

	# The front door: client addresses, listeners and their caps, TLS
	# (certs), the site server it hands site hosts to (serve), the custom
	# domains' route table it answers them from (domains), the metrics of
	# what it answers (metrics), and the serve command, whose --replica
	# mode serves from the primary's store (replica).
	sitedrop/hooks/server/certs,
	sitedrop/sites/domains,
	sitedrop/sites/analytics/ship,
	sitedrop/hooks/server/metrics,
	sitedrop/sites/replica
	< sitedrop/hooks/server;

	# A refusal as the web host answers it: a status, the exact message
	# and a limit's Retry-After. The API's bindings (hooks) and the pages
	# (hooks/pages) both answer with it; which domain error becomes which
	# answer stays hooks/errors.go's.
	sitedrop/sites/ratelimit
	< sitedrop/hooks/internal/apierr;

	# The web pages: templ props built from the services hooks builds and
	# hands them (the same as the API's), rendered with ui; a refusal is
	# apierr's, in the API's words. The account's activity page reads the
	# audit log (audit).
	sitedrop/hooks/internal/apierr,
	sitedrop/hooks/internal/routectx,
	sitedrop/hooks/server,
	sitedrop/sites/audit,
	sitedrop/sites/abuse,
	sitedrop/sites/domains,
	sitedrop/sites/forms,
	sitedrop/sites/intake,
	sitedrop/sites/usage,
	sitedrop/ui
	< sitedrop/hooks/pages;

	# hooks binds every service to the PocketBase app, and starts and
	# stops the background ones (lifecycle).
	sitedrop/hooks/pages,
	sitedrop/hooks/server,
	sitedrop/hooks/internal/lifecycle,
	sitedrop/hooks/internal/stmtcache,
	sitedrop/sites/abuse,
	sitedrop/sites/agent,
	sitedrop/sites/analytics/statsdb,
	sitedrop/sites/safetext,
	sitedrop/sites/domains,
	sitedrop/sites/forms,
	sitedrop/sites/intake,
	sitedrop/sites/replica,
	sitedrop/sites/report,
	sitedrop/sites/usage,
	sitedrop/ui
	< sitedrop/hooks;

	# The client program: the API over HTTP (client), the MCP tools over
	# stdio (agent), the report it prints (report), every server text
	# escaped (safetext); sites for the limits it checks before sending.
	sitedrop/sites,
	sitedrop/sites/agent,
	sitedrop/sites/report,
	sitedrop/sites/safetext
	< sitedrop/hooks/cli;

	# PocketBase's databases opened through the statement cache: the
	# binary hands it to PocketBase (BaseAppConfig.DBConnect), the
	# bindings' tests open their apps with it.
	sitedrop/hooks/internal/stmtcache
	< sitedrop/hooks/dbconnect;

	# The server's admin commands (user, key): they run on the server's
	# data dir, so they stand beside the bindings, not in the client
	# program; sites/accounts does their work, sites has the plans.
	sitedrop/sites
	< sitedrop/hooks/admincmd;

	# The binary: wiring only.
	sitedrop/hooks,
	sitedrop/hooks/admincmd,
	sitedrop/hooks/cli,
	sitedrop/hooks/dbconnect,
	sitedrop/hooks/server,
	sitedrop/migrations
	< sitedrop;

	# The architecture's rules.
	# sites/ is the product's core, free of HTTP routing: nothing in it
	# reaches the bindings, the front door or the client program.
	sitedrop/hooks/... !< sitedrop/sites/...;

	# The schema stands alone: the bindings are built on it, never under it.
	sitedrop/hooks/... !< sitedrop/migrations;

	# ui imports nothing of ours: a page renders its props, so no page can
	# run a query or a rule of its own.
	sitedrop/... !< sitedrop/ui;

	# The wire imports nothing of ours: every side of the API can use it,
	# and no rule or query can hide in a JSON body.
	sitedrop/... !< sitedrop/sites/wire;

	# The front door is handed what it serves, built once by the
	# bindings: it never reaches back into them.
	sitedrop/hooks !< sitedrop/hooks/server/...;

	# The pages are handed the services they use, built once by the
	# bindings: they never reach back into them.
	sitedrop/hooks !< sitedrop/hooks/pages;

	# The client program talks to a server over HTTP: it never links the
	# server's bindings.
	sitedrop/hooks !< sitedrop/hooks/cli;

	# Test helpers (a contract test, an S3 server for tests, a client
	# command's runner) stay out of the binary.
	sitedrop/sites/store/storetest,
	sitedrop/sites/store/s3store/s3test,
	sitedrop/hooks/internal/clitest
	!< sitedrop;
`

// pocketBaseImporters are the only packages whose own files may import
// PocketBase (github.com/pocketbase/...: its app, core, dbx, validation),
// each with the reason. A package not here may still link PocketBase
// through one of these (sites/serve does, through sites); what it may not
// do is call it.
//
// sites/serve is not here, and is never to be: the hot path runs on the
// replicas too, which have no database, and a Site is all it needs.
var pocketBaseImporters = map[string]string{
	"sitedrop":                         "the binary: the PocketBase app and its commands",
	"sitedrop/hooks":                   "the bindings: routes, record hooks and jobs of the PocketBase app",
	"sitedrop/hooks/admincmd":          "the admin commands open the app's data dir and run its migrations before they touch accounts",
	"sitedrop/hooks/pages":             "the web pages are routes and middlewares of the PocketBase router, on its request events",
	"sitedrop/hooks/dbconnect":         "it opens PocketBase's SQLite databases as a dbx.DB, the type PocketBase's DBConnect returns",
	"sitedrop/hooks/server":            "the front door binds to PocketBase's serve and terminate events (its server, listener and router), and the serve command runs apis.Serve",
	"sitedrop/migrations":              "the schema, run by PocketBase's migration runner",
	"sitedrop/sites":                   "deployments are records of the deployments collection",
	"sitedrop/sites/accounts":          "keys, codes and sessions are records",
	"sitedrop/hooks/internal/routectx": "the caller and its deployment ride on PocketBase's request event",
	"sitedrop/sites/audit":             "the audit log is the audit_log collection",
	"sitedrop/sites/abuse":             "the abuse reports are records of the reports collection",
	"sitedrop/sites/analytics/statsdb": "the analytics' daily rows are records of the site_stats collection",
	"sitedrop/sites/domains":           "the domains collection",
	"sitedrop/sites/usage":             "an account's usage is counted from the deployments, versions and site_stats collections",
	"sitedrop/sites/forms":             "the submissions, webhooks and deliveries collections",
}

// stdlibOnly are packages whose own files import nothing from outside the
// module but the standard library, each with the reason.
var stdlibOnly = map[string]string{
	"sitedrop/hooks/internal/apierr":    "a refusal's shape (status, message, Retry-After) on net/http alone: the API and the pages share it without sharing each other",
	"sitedrop/hooks/internal/lifecycle": "it starts and stops what it is given: the bindings own every dependency of the services themselves",
	"sitedrop/hooks/internal/stmtcache": "it wraps the SQLite driver it is handed (PocketBase's) through database/sql/driver alone",
	"sitedrop/sites/analytics":          "it counts every answer of the site server, replicas included (which have no database), from untrusted headers and paths: the store of its counts is sites/analytics/statsdb's",
	"sitedrop/sites/intake":             "it reads untrusted bodies on net/http alone, within their limits: no dependency sees a byte before the guards do",
	"sitedrop/sites/rules":              "it parses untrusted files on every deploy and is fuzzed on its own: every line it runs is in this repository or Go's",
	"sitedrop/sites/wire":               "the API's JSON bodies: a client of the API links them without any dependency of the server's",
}

// TestDependencies holds every package of the module to depsRules,
// pocketBaseImporters and stdlibOnly. It reads the import clauses of
// every Go file whatever its build constraints (as Go's own deps test
// does), so a file for another system cannot hide an import, and it
// fails for a package missing from depsRules, or one the rules name that
// no longer exists. The "!<" rules hold for test files too: a test of
// sites/ may import migrations, never hooks.
func TestDependencies(t *testing.T) {
	module, err := modulePath("go.mod")
	if err != nil {
		t.Fatal(err)
	}
	policy, err := parseDepsRules(depsRules)
	if err != nil {
		t.Fatalf("depsRules:\n%v", err)
	}
	pkgs, err := modulePackages(".", module)
	if err != nil {
		t.Fatal(err)
	}
	if len(pkgs) < 2 {
		t.Fatalf("found %d packages in the module: the walk is broken", len(pkgs))
	}
	for _, msg := range checkImports(module, pkgs, policy, pocketBaseImporters, stdlibOnly) {
		t.Error(msg)
	}
}

// TestDepsRulesRefuse: the checks of TestDependencies fail when a rule is
// broken, whether in the rules themselves or by a package's imports.
func TestDepsRulesRefuse(t *testing.T) {
	pkg := func(path string, imports ...string) modPackage {
		p := modPackage{path: path, imports: map[string][]string{}, tests: map[string][]string{}}
		for _, imp := range imports {
			if rest, ok := strings.CutPrefix(imp, "test:"); ok {
				p.tests[rest] = []string{"x_test.go"}
			} else {
				p.imports[imp] = []string{"x.go"}
			}
		}
		return p
	}
	const layers = "NONE < m/a; m/a < m/b < m/c; NONE < m/ui; m/ui, m/c < m;"
	all := []modPackage{pkg("m/a"), pkg("m/b", "m/a"), pkg("m/c", "m/b"), pkg("m/ui"), pkg("m", "m/c", "m/ui")}
	tests := []struct {
		name  string
		rules string
		pkgs  []modPackage // nil: all
		want  string       // in the one error; "" for none
	}{
		{"today passes", layers + "m/c !< m/a; m/... !< m/ui;", nil, ""},
		{"import not allowed", layers, []modPackage{pkg("m/a", "m/b"), pkg("m/b"), pkg("m/c"), pkg("m/ui"), pkg("m")},
			"m/a imports m/b (x.go), which depsRules does not allow"},
		{"import against a never rule", layers + "m/... !< m/ui;", []modPackage{pkg("m/a"), pkg("m/b"), pkg("m/c"), pkg("m/ui", "m/a"), pkg("m")},
			"m/ui imports m/a (x.go), which depsRules does not allow; it breaks `m/... !< m/ui`"},
		{"test import against a never rule", layers + "m/c !< m/a/...;", []modPackage{pkg("m/a", "test:m/c"), pkg("m/b"), pkg("m/c"), pkg("m/ui"), pkg("m")},
			"m/a's tests import m/c (x_test.go), which `m/c !< m/a/...` forbids"},
		{"test import reaching a forbidden package", layers + "m/a !< m/ui;", []modPackage{pkg("m/a"), pkg("m/b"), pkg("m/c"), pkg("m/ui", "test:m/b"), pkg("m")},
			"m/ui's tests import m/b (x_test.go), which `m/a !< m/ui` forbids"},
		{"new package", layers, append(slices.Clone(all), pkg("m/new")), "m/new is not in depsRules"},
		{"stale package", layers + "NONE < m/gone;", nil, "depsRules places m/gone, which is not a package of the module"},
		{"stale stdlibOnly entry", "NONE < m/a < m/c; NONE < m/ui; m/ui, m/c < m;", []modPackage{pkg("m/a"), pkg("m/c"), pkg("m/ui"), pkg("m")},
			"stdlibOnly places m/b, which is not a package of the module"},
		{"never rule outside the module", layers + "x/y !< m/a;", nil, "x/y is not a package path of module m"},
		{"PocketBase", layers, []modPackage{pkg("m/a", "github.com/pocketbase/pocketbase/core"), pkg("m/b"), pkg("m/c"), pkg("m/ui"), pkg("m")},
			"m/a imports github.com/pocketbase/pocketbase/core (x.go): only pocketBaseImporters may import PocketBase"},
		{"outside the standard library", layers, []modPackage{pkg("m/a"), pkg("m/b", "golang.org/x/net/html"), pkg("m/c"), pkg("m/ui"), pkg("m")},
			"m/b imports golang.org/x/net/html (x.go): it is in stdlibOnly"},
		{"rules allow a never", layers + "m/a !< m/c;", nil, "m/c may import m/a, which `m/a !< m/c` forbids"},
		{"rules allow a never through a pattern", layers + "m/... !< m/ui/...; NONE < m/d; m/d < m/ui/x;", nil, "m/ui/x may import m/d, which `m/... !< m/ui/...` forbids"},
		{"cycle", "NONE < m/c; m/b < m/a; m/a < m/b;", nil, "m/b is used before its definition"},
		{"defined twice", "NONE < m/a; NONE < m/a;", nil, "m/a is defined twice"},
		{"missing comma", "NONE < m/a m/b;", nil, "syntax"},
		{"empty list", "NONE < ;", nil, "syntax"},
		{"pattern defined", "NONE < m/a/...;", nil, "a pattern cannot be defined"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pkgs := tt.pkgs
			if pkgs == nil {
				pkgs = all
			}
			var got []string
			policy, err := parseDepsRules(tt.rules)
			if err != nil {
				got = []string{err.Error()}
			} else {
				got = checkImports("m", pkgs, policy, map[string]string{"m": "the binary"}, map[string]string{"m/b": "pure"})
			}
			switch {
			case tt.want == "" && len(got) != 0:
				t.Fatalf("got %q, want no error", got)
			case tt.want != "" && (len(got) != 1 || !strings.Contains(got[0], tt.want)):
				t.Fatalf("got %q, want one error with %q", got, tt.want)
			}
		})
	}
}

// modPackage is what the files of one package of the module import: for
// each import path, the names of the files that import it.
type modPackage struct {
	path    string
	imports map[string][]string // non-test files
	tests   map[string][]string // _test.go files, in or out of the package
}

// depsPolicy is depsRules parsed.
type depsPolicy struct {
	// allowed is, for each package defined, the packages of the module it
	// may import: the transitive closure of the "<" rules.
	allowed map[string]map[string]bool
	never   []neverRule
}

// neverRule is an "a !< b" rule: no package matching def may import a
// package matching less, directly or through another.
type neverRule struct {
	less, def []string
	text      string // as written, for messages
}

// parseDepsRules parses rules written in the language depsRules
// describes. It refuses a package defined twice or used before its
// definition (which is how a cycle shows), a "!<" rule the "<" rules
// break, and bad syntax.
func parseDepsRules(rules string) (*depsPolicy, error) {
	p := &depsPolicy{allowed: map[string]map[string]bool{}}
	var errs []string
	var lines []string
	for line := range strings.SplitSeq(rules, "\n") {
		line, _, _ = strings.Cut(line, "#")
		lines = append(lines, line)
	}
	stmts := strings.Split(strings.Join(lines, "\n"), ";")
	if last := stmts[len(stmts)-1]; strings.TrimSpace(last) != "" {
		return nil, fmt.Errorf("syntax: %q does not end with ;", strings.Join(strings.Fields(last), " "))
	}
	for _, stmt := range stmts[:len(stmts)-1] {
		text := strings.Join(strings.Fields(stmt), " ")
		lists, ops, err := splitChain(stmt)
		if err != nil {
			errs = append(errs, fmt.Sprintf("syntax: %q: %v", text, err))
			continue
		}
		for i, op := range ops {
			less, def := lists[i], lists[i+1]
			if op == "!<" {
				p.never = append(p.never, neverRule{less: less, def: def,
					text: strings.Join(less, ", ") + " !< " + strings.Join(def, ", ")})
				continue
			}
			for _, d := range def {
				if d == "NONE" || strings.HasSuffix(d, "/...") {
					errs = append(errs, fmt.Sprintf("%q: %s: a pattern cannot be defined", text, d))
					continue
				}
				if _, dup := p.allowed[d]; dup {
					errs = append(errs, fmt.Sprintf("%q: %s is defined twice", text, d))
					continue
				}
				may := map[string]bool{}
				for _, l := range less {
					if l == "NONE" {
						continue
					}
					below, ok := p.allowed[l]
					if !ok {
						errs = append(errs, fmt.Sprintf("%q: %s is used before its definition: a package may only build on packages defined above it, and so no two can import each other", text, l))
						continue
					}
					may[l] = true
					for b := range below {
						may[b] = true
					}
				}
				p.allowed[d] = may
			}
		}
	}
	for _, r := range p.never {
		for _, d := range p.defined(r.def) {
			for _, l := range p.defined(r.less) {
				if d != l && p.allowed[d][l] {
					errs = append(errs, fmt.Sprintf("%s may import %s, which `%s` forbids", d, l, r.text))
				}
			}
		}
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("%s", strings.Join(errs, "\n"))
	}
	return p, nil
}

// splitChain splits a statement "a, b < c !< d" into its lists of names
// and the operators between them.
func splitChain(stmt string) (lists [][]string, ops []string, err error) {
	rest := stmt
	for {
		part, op := rest, ""
		if i := strings.IndexByte(rest, '<'); i >= 0 {
			part, op, rest = rest[:i], "<", rest[i+1:]
			if p, ok := strings.CutSuffix(part, "!"); ok {
				part, op = p, "!<"
			}
		}
		var names []string
		for f := range strings.SplitSeq(part, ",") {
			name := strings.TrimSpace(f)
			if name == "" || strings.ContainsAny(name, " \t\r\n!") {
				return nil, nil, fmt.Errorf("want names separated by commas, have %q", strings.TrimSpace(part))
			}
			names = append(names, name)
		}
		lists = append(lists, names)
		if op == "" {
			break
		}
		ops = append(ops, op)
	}
	if len(ops) == 0 {
		return nil, nil, fmt.Errorf("no < or !<")
	}
	return lists, ops, nil
}

// defined returns the defined packages that names match, sorted.
func (p *depsPolicy) defined(names []string) []string {
	var out []string
	for pkg := range p.allowed {
		if slices.ContainsFunc(names, func(n string) bool { return matchPattern(n, pkg) }) {
			out = append(out, pkg)
		}
	}
	slices.Sort(out)
	return out
}

// matchPattern reports whether pkg is name, or under it when name ends
// in "/...".
func matchPattern(name, pkg string) bool {
	if base, ok := strings.CutSuffix(name, "/..."); ok {
		return pkg == base || strings.HasPrefix(pkg, base+"/")
	}
	return pkg == name
}

// breaks returns the "!<" rules that pkg importing imp breaks, through
// imp itself or what imp may import.
func (p *depsPolicy) breaks(pkg, imp string) []string {
	var out []string
	for _, r := range p.never {
		if !slices.ContainsFunc(r.def, func(n string) bool { return matchPattern(n, pkg) }) {
			continue
		}
		reached := append([]string{imp}, slices.Collect(maps.Keys(p.allowed[imp]))...)
		if slices.ContainsFunc(reached, func(q string) bool {
			return q != pkg && slices.ContainsFunc(r.less, func(n string) bool { return matchPattern(n, q) })
		}) {
			out = append(out, "`"+r.text+"`")
		}
	}
	return out
}

// checkImports returns a message for each way pkgs break the policy, the
// PocketBase importers or the standard-library-only packages, and for
// each package missing from the policy or named by it and not found.
func checkImports(module string, pkgs []modPackage, p *depsPolicy, pocketBase, stdlib map[string]string) []string {
	var msgs []string
	inModule := func(path string) bool { return path == module || strings.HasPrefix(path, module+"/") }
	found := map[string]bool{}
	for _, pkg := range pkgs {
		found[pkg.path] = true
	}
	for _, table := range []struct {
		name string
		pkgs []string
	}{
		{"depsRules", slices.Sorted(maps.Keys(p.allowed))},
		{"pocketBaseImporters", slices.Sorted(maps.Keys(pocketBase))},
		{"stdlibOnly", slices.Sorted(maps.Keys(stdlib))},
	} {
		for _, name := range table.pkgs {
			if !found[name] {
				msgs = append(msgs, fmt.Sprintf("%s places %s, which is not a package of the module: remove it, or fix its name", table.name, name))
			}
		}
	}
	for _, r := range p.never {
		for _, name := range append(slices.Clone(r.less), r.def...) {
			if !inModule(strings.TrimSuffix(name, "/...")) {
				msgs = append(msgs, fmt.Sprintf("`%s`: %s is not a package path of module %s", r.text, name, module))
			}
		}
	}
	for _, pkg := range pkgs {
		allowed, placed := p.allowed[pkg.path]
		if !placed {
			msgs = append(msgs, fmt.Sprintf("%s is not in depsRules: place it after the packages it imports, with a comment that says why it sits there", pkg.path))
		}
		for _, imp := range slices.Sorted(maps.Keys(pkg.imports)) {
			files := strings.Join(pkg.imports[imp], ", ")
			switch {
			case imp == "C":
			case inModule(imp):
				if placed && !allowed[imp] {
					msg := fmt.Sprintf("%s imports %s (%s), which depsRules does not allow", pkg.path, imp, files)
					if broken := p.breaks(pkg.path, imp); len(broken) > 0 {
						msg += "; it breaks " + strings.Join(broken, ", ")
					}
					msgs = append(msgs, msg)
				}
			case strings.HasPrefix(imp, "github.com/pocketbase/") && pocketBase[pkg.path] == "":
				msgs = append(msgs, fmt.Sprintf("%s imports %s (%s): only pocketBaseImporters may import PocketBase", pkg.path, imp, files))
			case stdlib[pkg.path] != "" && strings.Contains(strings.Split(imp, "/")[0], "."):
				msgs = append(msgs, fmt.Sprintf("%s imports %s (%s): it is in stdlibOnly, because %s", pkg.path, imp, files, stdlib[pkg.path]))
			}
		}
		for _, imp := range slices.Sorted(maps.Keys(pkg.tests)) {
			if imp == pkg.path || !inModule(imp) {
				continue
			}
			for _, rule := range p.breaks(pkg.path, imp) {
				msgs = append(msgs, fmt.Sprintf("%s's tests import %s (%s), which %s forbids", pkg.path, imp, strings.Join(pkg.tests[imp], ", "), rule))
			}
		}
	}
	return msgs
}

// modulePath returns the module path that the go.mod file at path declares.
func modulePath(path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("reading the module path: %w", err)
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "module" {
			return strings.Trim(f[1], `"`), nil
		}
	}
	return "", fmt.Errorf("%s declares no module", path)
}

// modulePackages reads the import clauses of every Go file of the module
// rooted at root, grouped by package, as `go list ./...` finds them:
// folders named testdata or starting with . or _, and nested modules,
// are not part of it. Build constraints are not applied, except
// "//go:build ignore".
func modulePackages(root, module string) ([]modPackage, error) {
	byPath := map[string]*modPackage{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path == root {
				return nil
			}
			if name == "testdata" || name == "vendor" || name == "node_modules" || name == "pb_data" ||
				strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly|parser.ParseComments)
		if err != nil {
			return fmt.Errorf("reading the imports: %w", err)
		}
		for _, group := range f.Comments {
			if group.Pos() > f.Package {
				break
			}
			for _, c := range group.List {
				if strings.TrimSpace(c.Text) == "//go:build ignore" {
					return nil
				}
			}
		}
		rel, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		importPath := module
		if rel != "." {
			importPath += "/" + filepath.ToSlash(rel)
		}
		pkg := byPath[importPath]
		if pkg == nil {
			pkg = &modPackage{path: importPath, imports: map[string][]string{}, tests: map[string][]string{}}
			byPath[importPath] = pkg
		}
		into := pkg.imports
		if strings.HasSuffix(name, "_test.go") {
			into = pkg.tests
		}
		for _, spec := range f.Imports {
			imp, err := strconv.Unquote(spec.Path.Value)
			if err != nil {
				return fmt.Errorf("%s: import %s: %w", path, spec.Path.Value, err)
			}
			into[imp] = append(into[imp], name)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	var pkgs []modPackage
	for _, path := range slices.Sorted(maps.Keys(byPath)) {
		pkgs = append(pkgs, *byPath[path])
	}
	return pkgs, nil
}
