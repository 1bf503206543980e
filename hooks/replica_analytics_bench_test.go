package hooks

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pocketbase/pocketbase/tools/cron"

	"sitedrop/sites"
	"sitedrop/sites/analytics"
	"sitedrop/sites/analytics/ship"
	"sitedrop/sites/analytics/statsdb"
	"sitedrop/sites/store/s3store/s3test"
)

// benchEnvInt is the environment variable name as a positive int, def
// when unset.
func benchEnvInt(b *testing.B, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		b.Fatalf("%s=%q: want a positive number", name, v)
	}
	return n
}

// benchEnvDuration is the environment variable name as a positive
// duration, def when unset.
func benchEnvDuration(b *testing.B, name string, def time.Duration) time.Duration {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		b.Fatalf("%s=%q: want a duration", name, v)
	}
	return d
}

// countHost is the site the counting benchmark visits.
const countHost = "count-site.sites.test"

// countPages are the site's pages (clean URLs, as the site server
// answers them with 200) and countAssets its other files: fewer than
// statsdb.ReportTopLimit of each kind, so that the report's top lists
// hold every key and can be compared whole.
var (
	countPages = map[string]string{
		"/": "index.html", "/pricing": "pricing.html", "/about": "about.html",
		"/contact": "contact.html", "/changelog": "changelog.html", "/privacy": "privacy.html",
		"/docs/": "docs/index.html", "/docs/install": "docs/install.html", "/docs/deploy": "docs/deploy.html",
		"/blog/": "blog/index.html", "/blog/launch": "blog/launch.html", "/blog/replicas": "blog/replicas.html",
	}
	countAssets  = []string{"/style.css", "/app.js"}
	countMissing = []string{"/wp-login.php", "/old-post", "/blog/2019/hello", "/favicon.ico", "/feed.xml"}
	// countReferrers are external Referer headers and the host the
	// report names each by.
	countReferrers = [][2]string{
		{"https://www.google.com/", "google.com"},
		{"https://news.ycombinator.com/item?id=41000000", "news.ycombinator.com"},
		{"https://t.co/a1B2c3", "t.co"},
		{"https://www.reddit.com/r/selfhosted/comments/x/", "reddit.com"},
		{"https://duckduckgo.com/", "duckduckgo.com"},
		{"https://github.com/sitedrop/sitedrop", "github.com"},
		{"https://lobste.rs/s/abc123", "lobste.rs"},
		{"https://mastodon.social/@someone/1234", "mastodon.social"},
	}
	countBrowsers = []string{
		"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36",
		"Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1",
		"Mozilla/5.0 (X11; Linux x86_64; rv:132.0) Gecko/20100101 Firefox/132.0",
		"Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36",
		"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.0.0",
		"Mozilla/5.0 (Macintosh; Intel Mac OS X 14_7_1) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Safari/605.1.15",
	}
	countBots = []string{
		"Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
		"Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)",
	}
)

// countNodes names the nodes behind the load balancer, by index.
var countNodes = []string{"primary", "replica a", "replica b"}

// countRequest is one request of the load: to node, from the client ip
// with user agent ua.
type countRequest struct {
	node             int
	ip, ua           string
	path, referer    string
	want             int // the status it must get
	view, bot, asset bool
}

// countLoad is the load of BenchmarkReplicasCountVisits and what the
// analytics must then show.
type countLoad struct {
	reqs []countRequest
	// the expected counts
	views, visitors, notFound, botViews int
	pages, referrers, missing           map[string]int64
	viewsByNode                         [3]int
	multiNode                           int // visitors seen on two or three nodes
}

// planCountLoad plans views page views by visitors distinct (IP, user
// agent) pairs, each visitor's requests spread by a load balancer over
// the three nodes (70 % of visitors stick to one node, the others land
// anywhere at each request), with referrers on first views, one 404 per
// 50 views, one bot view per 40 and one asset per 4. The plan is the
// same at every run (a fixed seed) and its requests are shuffled.
func planCountLoad(views, visitors int) countLoad {
	rng := rand.New(rand.NewPCG(28, 3362))
	l := countLoad{views: views, visitors: visitors,
		pages: map[string]int64{}, referrers: map[string]int64{}, missing: map[string]int64{}}
	pagePaths := slices.Sorted(maps.Keys(countPages))
	type visitor struct {
		ip, ua string
		sticky int // the node, or -1: any
		seen   [3]bool
		views  int
	}
	vs := make([]visitor, visitors)
	for i := range vs {
		k := i * 9 / 10 // one in ten shares its address with the one before (another browser behind the same NAT)
		vs[i] = visitor{ip: fmt.Sprintf("198.18.%d.%d", k/250, k%250+1), ua: countBrowsers[i%len(countBrowsers)], sticky: -1}
		if rng.IntN(10) < 7 {
			vs[i].sticky = rng.IntN(3)
		}
	}
	nodeOf := func(v *visitor) int {
		n := v.sticky
		if n < 0 {
			n = rng.IntN(3)
		}
		return n
	}
	// each visitor one view, the rest skewed towards the first visitors
	who := make([]int, 0, views)
	for i := range visitors {
		who = append(who, i)
	}
	for len(who) < views {
		r := rng.Float64()
		who = append(who, int(float64(visitors)*r*r))
	}
	for _, i := range who {
		v := &vs[i]
		node := nodeOf(v)
		path := pagePaths[rng.IntN(len(pagePaths))]
		ref := "http://" + countHost + pagePaths[rng.IntN(len(pagePaths))] // the site's own: not a referrer
		if v.views == 0 {
			if rng.IntN(10) < 6 {
				path = "/"
			}
			ref = ""
			if rng.IntN(2) == 0 {
				r := countReferrers[rng.IntN(len(countReferrers))]
				ref = r[0]
				l.referrers[r[1]]++
			}
		}
		v.views++
		v.seen[node] = true
		l.pages[path]++
		l.viewsByNode[node]++
		l.reqs = append(l.reqs, countRequest{node: node, ip: v.ip, ua: v.ua, path: path, referer: ref, want: http.StatusOK, view: true})
	}
	for range views / 50 {
		v := &vs[rng.IntN(visitors)]
		path := countMissing[rng.IntN(len(countMissing))]
		l.missing[path]++
		l.notFound++
		l.reqs = append(l.reqs, countRequest{node: nodeOf(v), ip: v.ip, ua: v.ua, path: path, want: http.StatusNotFound})
	}
	for i := range views / 40 {
		path := pagePaths[rng.IntN(len(pagePaths))]
		l.botViews++
		l.reqs = append(l.reqs, countRequest{node: rng.IntN(3), ip: fmt.Sprintf("66.249.66.%d", i%200+1),
			ua: countBots[i%len(countBots)], path: path, want: http.StatusOK, bot: true})
	}
	for range views / 4 {
		v := &vs[rng.IntN(visitors)]
		l.reqs = append(l.reqs, countRequest{node: nodeOf(v), ip: v.ip, ua: v.ua,
			path: countAssets[rng.IntN(len(countAssets))], referer: "http://" + countHost + "/", want: http.StatusOK, asset: true})
	}
	for _, v := range vs {
		if n := btoi(v.seen[0]) + btoi(v.seen[1]) + btoi(v.seen[2]); n > 1 {
			l.multiNode++
		}
	}
	rng.Shuffle(len(l.reqs), func(i, j int) { l.reqs[i], l.reqs[j] = l.reqs[j], l.reqs[i] })
	return l
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// countSiteUpload is the visited site: the pages of countPages (each
// with its stylesheet and script) and the assets.
func countSiteUpload() sites.Upload {
	up := sites.Upload{StorageType: sites.StorageFiles}
	for _, path := range slices.Sorted(maps.Keys(countPages)) {
		html := fmt.Sprintf(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>%s</title>`+
			`<link rel="stylesheet" href="/style.css"><script src="/app.js" defer></script></head>`+
			`<body><nav><a href="/">Home</a> <a href="/docs/">Docs</a> <a href="/blog/">Blog</a></nav>`+
			`<main><h1>%s</h1><p>%s</p></main></body></html>`, path, path, strings.Repeat("Some words about it. ", 80))
		up.Files = append(up.Files, sites.File{Path: countPages[path], ContentType: "text/html; charset=utf-8", Data: []byte(html)})
	}
	up.Files = append(up.Files,
		sites.File{Path: "style.css", ContentType: "text/css; charset=utf-8", Data: []byte(strings.Repeat("body{margin:0 auto;max-width:40em}\n", 60))},
		sites.File{Path: "app.js", ContentType: "text/javascript; charset=utf-8", Data: []byte(strings.Repeat("console.debug('ready');\n", 100))},
	)
	return up
}

// countResult is what BenchmarkReplicasCountVisits writes to its report.
type countResult struct {
	load                  countLoad
	ship                  time.Duration
	align                 bool
	clients, sent, errors int
	sendTook              time.Duration
	got                   statsdb.Report
	gotViews, gotVisitors int64
	gotNotFound, gotBots  int64
	gotRefs, wantRefs     int64
	gotPages, gotMissing  bool // the lists are equal
	shown                 time.Duration
	within                time.Duration
	ok                    bool
	failure               string
}

// BenchmarkReplicasCountVisits is the replica counting test of issue 28
// at the size of a real site: REPLICAS_VIEWS page views (default 3,362)
// from REPLICAS_VISITORS visitors (distinct IP address and user agent
// pairs, default 500), spread by a load balancer over two replicas (the
// real `serve --replica`, shipping every REPLICAS_SHIP, default
// ship.DefaultInterval) and the primary (its front door on loopback, its
// flush job run by its real cron, every minute), sent by REPLICAS_CLIENTS
// concurrent clients (default 8), with 404s, bot views, assets and
// referrers (see planCountLoad), all through a load balancer in
// --trusted-proxies (X-Forwarded-For). It then reads GET
// /deploy/{id}/analytics until every count is exact and reports the time
// from the last view to then; it fails when a count goes past the sent
// one (counted twice) or is not reached within REPLICAS_WAIT (default
// three minutes, the bound). That time depends on where in the
// primary's minute the views come: by default the replicas start and the
// load is sent one second after the primary's job, so that the replicas'
// first ship, one interval later, just misses a merge (the slowest case:
// about an interval and a minute); REPLICAS_ALIGN=0 starts at once,
// wherever in the minute that is. With REPLICAS_REPORT set, it writes a
// Markdown report to that file; progress goes to stderr.
//
// Run it once: go test -run '^$' -bench ReplicasCountVisits -benchtime
// 1x -timeout 30m ./hooks/ (bench/replicas.sh does).
func BenchmarkReplicasCountVisits(b *testing.B) {
	views := benchEnvInt(b, "REPLICAS_VIEWS", 3362)
	visitors := benchEnvInt(b, "REPLICAS_VISITORS", 500)
	clients := benchEnvInt(b, "REPLICAS_CLIENTS", 8)
	shipEvery := benchEnvDuration(b, "REPLICAS_SHIP", ship.DefaultInterval)
	wait := benchEnvDuration(b, "REPLICAS_WAIT", 3*time.Minute)
	align := os.Getenv("REPLICAS_ALIGN") != "0"
	if visitors > views {
		b.Fatalf("REPLICAS_VISITORS=%d is more than REPLICAS_VIEWS=%d: each visitor views a page", visitors, views)
	}
	progress := func(format string, args ...any) {
		fmt.Fprintf(os.Stderr, "--> %s "+format+"\n", append([]any{time.Now().UTC().Format(time.TimeOnly)}, args...)...)
	}
	res := countResult{load: planCountLoad(views, visitors), ship: shipEvery, clients: clients, within: wait, align: align}
	if path := os.Getenv("REPLICAS_REPORT"); path != "" {
		defer func() {
			if err := os.WriteFile(path, countReport(&res), 0o644); err != nil {
				b.Error(err)
			}
		}()
	}
	for b.Loop() {
		countVisits(b, &res, progress)
	}
	b.ReportMetric(float64(views), "views")
	b.ReportMetric(float64(res.gotViews), "views-in-api")
	b.ReportMetric(float64(res.gotVisitors), "visitors-in-api")
	b.ReportMetric(res.shown.Seconds(), "s-to-api")
}

// countVisits is one run of BenchmarkReplicasCountVisits: res holds the
// load and the settings, and receives the figures.
func countVisits(b *testing.B, res *countResult, progress func(string, ...any)) {
	fail := func(format string, args ...any) {
		res.failure = fmt.Sprintf(format, args...)
		b.Fatal(res.failure)
	}
	views, visitors, clients, shipEvery, wait := res.load.views, res.load.visitors, res.clients, res.ship, res.within
	srv := s3test.Start(b)
	app, sd := newBareApp(b, func(c *Config) {
		c.Store, c.Analytics = srv.URL(srv.NewBucket(b), "sd"), true
		c.TrustedProxies = []string{"127.0.0.1"} // the load balancer
		c.MaxFiles = 100
	})
	defer app.Cleanup()
	alice := mustUser(b, app, "alice@example.com", sites.PlanPro, fixtureKey("alice"))
	title := "Counted"
	c, err := sd.svc.Create(context.Background(), sites.CreateParams{ID: "countsite000001", Owner: alice,
		Slug: "count-site", Meta: sites.Metadata{Title: &title}, Upload: countSiteUpload()})
	if err != nil {
		b.Fatal(err)
	}
	if err := sd.publisher.Flush(context.Background()); err != nil {
		b.Fatal(err)
	}
	// A primary up for a minute has run its job: the day's salt is in
	// the store before the first visitor.
	sd.statsFlush.FlushPeriodic()
	// The primary as in production: its front door on a listener, the
	// router behind it; building the router runs OnServe, which
	// starts the app's cron, and with it the flush job, every minute.
	primary := benchListen(b, sd.front().Wrap(newMux(b, app)))
	if !slices.ContainsFunc(app.Cron().Jobs(), func(j *cron.Job) bool { return j.Id() == jobStatsFlush }) {
		b.Fatalf("no %s job in the cron", jobStatsFlush)
	}
	if res.align {
		// The slowest case: the replicas start, and the load is sent,
		// right after the primary's job has run, so that their first
		// ship (one interval after their start) just misses it.
		at := time.Now().Truncate(time.Minute).Add(time.Minute + time.Second)
		progress("waiting until %s: the replicas start and the load is sent right after the primary's job (the slowest case)",
			at.UTC().Format(time.TimeOnly))
		time.Sleep(time.Until(at))
	}
	replicaCfg := func(c *Config) {
		c.TrustedProxies = []string{"127.0.0.1"}
		c.AnalyticsShip = shipEvery
	}
	addrA, _, stopA := runReplicaCmd(b, sd, replicaCfg)
	defer stopA()
	addrB, _, stopB := runReplicaCmd(b, sd, replicaCfg)
	defer stopB()
	addrs := []string{primary, addrA, addrB}
	progress("primary on %s, replicas on %s and %s shipping every %v; the primary merges every minute (its cron)",
		primary, addrA, addrB, shipEvery)

	// the load
	progress("%d requests (%d page views by %d visitors, %d of them on several nodes) from %d clients",
		len(res.load.reqs), views, visitors, res.load.multiNode, clients)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients, DisableCompression: true},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	next := make(chan countRequest)
	var errs atomic.Int64
	var firstErr sync.Once
	var wg sync.WaitGroup
	start := time.Now()
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range next {
				req, _ := http.NewRequest(http.MethodGet, "http://"+addrs[r.node]+r.path, nil)
				req.Host = countHost
				req.Header.Set("User-Agent", r.ua)
				req.Header.Set("X-Forwarded-For", r.ip)
				req.Header.Set("Accept-Encoding", "gzip")
				if r.referer != "" {
					req.Header.Set("Referer", r.referer)
				}
				resp, err := client.Do(req)
				if err == nil {
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if resp.StatusCode != r.want {
						err = fmt.Errorf("%s %s: %d, want %d", countNodes[r.node], r.path, resp.StatusCode, r.want)
					}
				}
				if err != nil {
					errs.Add(1)
					firstErr.Do(func() { b.Error(err) })
				}
			}
		}()
	}
	for _, r := range res.load.reqs {
		next <- r
	}
	close(next)
	wg.Wait()
	last := time.Now()
	res.sent, res.errors, res.sendTook = len(res.load.reqs), int(errs.Load()), last.Sub(start)
	progress("sent in %v (%.0f req/s), %d errors", res.sendTook.Round(time.Millisecond),
		float64(res.sent)/res.sendTook.Seconds(), res.errors)
	if res.errors > 0 {
		fail("%d requests failed", res.errors)
	}

	// until the API shows them all
	deadline := last.Add(wait)
	lastLog := last
	for {
		got, err := countAPIReport(client, primary, c.Record.Id)
		if err != nil {
			fail("analytics: %v", err)
		}
		res.record(got)
		if res.exact() {
			res.shown = time.Since(last)
			break
		}
		if over := res.over(); over != "" {
			res.shown = time.Since(last)
			fail("%s after %v: counted twice", over, res.shown.Round(time.Millisecond))
		}
		if time.Now().After(deadline) {
			res.shown = time.Since(last)
			fail("not every count in the API %v after the last view: %s", wait, res.diff())
		}
		if time.Since(lastLog) >= 10*time.Second {
			lastLog = time.Now()
			progress("after %v: %d of %d page views, %d of %d visitors", time.Since(last).Round(time.Second),
				res.gotViews, views, res.gotVisitors, visitors)
		}
		time.Sleep(250 * time.Millisecond)
	}
	res.ok = true
	progress("all counts exact %v after the last view", res.shown.Round(time.Millisecond))
}

// countAPIReport reads GET /deploy/{id}/analytics from the primary at
// addr, as alice.
func countAPIReport(client *http.Client, addr, id string) (statsdb.Report, error) {
	req, _ := http.NewRequest(http.MethodGet, "http://"+addr+"/deploy/"+id+"/analytics", nil)
	req.Host = "web.test"
	req.Header.Set("Authorization", "Bearer "+fixtureKey("alice"))
	resp, err := client.Do(req)
	if err != nil {
		return statsdb.Report{}, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return statsdb.Report{}, err
	}
	if resp.StatusCode != http.StatusOK {
		return statsdb.Report{}, fmt.Errorf("%d %s", resp.StatusCode, body)
	}
	var r statsdb.Report
	if err := json.Unmarshal(body, &r); err != nil {
		return statsdb.Report{}, fmt.Errorf("%w: %s", err, body)
	}
	return r, nil
}

// record takes the report got: its totals over the period (a run across
// midnight has two days).
func (r *countResult) record(got statsdb.Report) {
	r.got = got
	r.gotViews, r.gotVisitors, r.gotNotFound, r.gotBots = 0, 0, 0, 0
	for _, d := range got.Days {
		r.gotViews += d.PageViews
		r.gotVisitors += d.Visitors
		r.gotNotFound += d.NotFound
		r.gotBots += d.BotViews
	}
	r.gotRefs, r.wantRefs = 0, 0
	for _, c := range got.Referrers {
		r.gotRefs += c.Count
	}
	for _, n := range r.load.referrers {
		r.wantRefs += n
	}
	r.gotPages = sameCounts(got.TopPages, r.load.pages)
	r.gotMissing = sameCounts(got.NotFoundPaths, r.load.missing)
}

// sameCounts reports whether the list got holds exactly want.
func sameCounts(got []analytics.Count, want map[string]int64) bool {
	if len(got) != len(want) {
		return false
	}
	for _, c := range got {
		if want[c.Key] != c.Count {
			return false
		}
	}
	return true
}

// exact reports whether every count is the sent one.
func (r *countResult) exact() bool {
	l := r.load
	return r.gotViews == int64(l.views) && r.gotVisitors == int64(l.visitors) &&
		r.gotNotFound == int64(l.notFound) && r.gotBots == int64(l.botViews) &&
		sameCounts(r.got.Referrers, l.referrers) && r.gotPages && r.gotMissing
}

// over names a count past the sent one, "" when there is none.
func (r *countResult) over() string {
	l := r.load
	switch {
	case r.gotViews > int64(l.views):
		return fmt.Sprintf("%d page views of %d sent", r.gotViews, l.views)
	case r.gotVisitors > int64(l.visitors):
		return fmt.Sprintf("%d visitors of %d", r.gotVisitors, l.visitors)
	case r.gotNotFound > int64(l.notFound):
		return fmt.Sprintf("%d 404s of %d sent", r.gotNotFound, l.notFound)
	case r.gotBots > int64(l.botViews):
		return fmt.Sprintf("%d bot views of %d sent", r.gotBots, l.botViews)
	case r.gotRefs > r.wantRefs:
		return fmt.Sprintf("%d referred views of %d sent", r.gotRefs, r.wantRefs)
	}
	return ""
}

// diff tells the counts that differ from the sent ones.
func (r *countResult) diff() string {
	l := r.load
	return fmt.Sprintf("page views %d of %d, visitors %d of %d, 404s %d of %d, bot views %d of %d, referrers %v (want %v), pages exact %v, 404 paths exact %v",
		r.gotViews, l.views, r.gotVisitors, l.visitors, r.gotNotFound, l.notFound, r.gotBots, l.botViews,
		r.got.Referrers, l.referrers, r.gotPages, r.gotMissing)
}

// countReport is the Markdown report of a run.
func countReport(r *countResult) []byte {
	var w strings.Builder
	l := r.load
	mark := func(ok bool) string {
		if ok {
			return "✅"
		}
		return "❌"
	}
	fmt.Fprintf(&w, "Two replicas (`serve --replica`, shipping every %v) and the primary (its flush job every minute, run by its cron), on versitygw; %d clients through a load balancer (X-Forwarded-For).",
		r.ship, r.clients)
	if r.align {
		fmt.Fprintf(&w, " The replicas start and the load is sent right after the primary's job has run: the slowest case.")
	}
	fmt.Fprintf(&w, "\n\n")
	fmt.Fprintf(&w, "| | sent | in `GET /deploy/{id}/analytics` | |\n|---|---:|---:|---|\n")
	fmt.Fprintf(&w, "| page views (primary %d, replica a %d, replica b %d) | %d | %d | %s |\n",
		l.viewsByNode[0], l.viewsByNode[1], l.viewsByNode[2], l.views, r.gotViews, mark(r.gotViews == int64(l.views)))
	fmt.Fprintf(&w, "| visitors (IP + user agent; %d seen on several nodes) | %d | %d | %s |\n",
		l.multiNode, l.visitors, r.gotVisitors, mark(r.gotVisitors == int64(l.visitors)))
	fmt.Fprintf(&w, "| 404s (%d paths) | %d | %d | %s |\n", len(l.missing), l.notFound, r.gotNotFound,
		mark(r.gotNotFound == int64(l.notFound) && r.gotMissing))
	fmt.Fprintf(&w, "| referred views (%d referrer hosts) | %d | %d | %s |\n", len(l.referrers), r.wantRefs, r.gotRefs,
		mark(sameCounts(r.got.Referrers, l.referrers)))
	fmt.Fprintf(&w, "| bot views | %d | %d | %s |\n", l.botViews, r.gotBots, mark(r.gotBots == int64(l.botViews)))
	fmt.Fprintf(&w, "| top pages (%d) exact | | %v | %s |\n", len(l.pages), r.gotPages, mark(r.gotPages))
	shown := r.shown.Round(100 * time.Millisecond).String()
	if !r.ok {
		shown = "not within " + shown
	}
	fmt.Fprintf(&w, "| from the last view to the API showing every count (≤ %v) | | %s | %s |\n", r.within, shown, mark(r.ok))
	fmt.Fprintf(&w, "\n%d requests (page views, 404s, bot views, assets) sent in %v (%.0f req/s), %d errors.\n",
		r.sent, r.sendTook.Round(time.Millisecond), float64(r.sent)/max(r.sendTook.Seconds(), 1e-9), r.errors)
	if r.failure != "" {
		fmt.Fprintf(&w, "\n**Failed:** %s\n", r.failure)
	}
	return []byte(w.String())
}
