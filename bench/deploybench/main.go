// Command deploybench measures sitedrop's deploy path, its memory, its cold
// start and its serving with many deployments, against servers it starts
// itself on 127.0.0.1 with fresh data directories. It prints a Markdown
// report.
//
// Usage, from the repository root (bench/deploy.sh wraps it, and installs
// wrk when missing):
//
//	go run ./bench/deploybench [-bin sitedrop] [-reps 20] [-sites 10000] ...
//
// Without -bin it builds sitedrop from the module it runs in. The servers
// are pinned to -server-cpu and this program, its HTTP client and wrk to
// -client-cpu (it re-executes itself under taskset to do so). Every
// latency is measured on the client side, over loopback: from before the
// request is sent to after the answer's body is read. Only 127.0.0.1 is
// contacted, and every load loop is bounded in time.
//
// What it does, in order:
//
//  1. Starts server A with an empty data directory; reads its idle RSS.
//  2. Times -reps deploys (POST /deploy, each of new, unique content) of 1
//     small HTML file, of 100 files and of 1000 files of 2 KB, after one
//     untimed warm-up deploy of each; then -reps unchanged redeploys (PUT
//     /deploy/{id} of the same 1000 files). The one-page deploys go over
//     one keep-alive connection (the client's connection reuse is counted
//     and reported), interleaved with as many sent each on a new TCP
//     connection, so that the report shows what a connection costs. Then
//     -burst one-page deploys of new sites from -parallel keep-alive
//     clients at once: deploys per second.
//  3. Reads the RSS; deletes those deployments and restarts server A; then
//     creates -sites one-file deployments (the first is "probe") with
//     -parallel clients, and reads the RSS.
//  4. Restarts server A -cold-runs times and times each start, from exec to
//     the first 200 of the probe site (polled every -poll).
//  5. Starts server B with a fresh data directory and only "probe", the same
//     page; times its cold start the same way.
//  6. Runs wrk on the probe page of B (1 deployment) and of A (-sites
//     deployments), and across all of A's sites, in interleaved rounds.
//  7. Reads the RSS of both servers again and stops them.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

type options struct {
	bin       string
	reps      int
	sites     int
	parallel  int
	duration  string
	warmup    string
	rounds    int
	conns     int
	coldRuns  int
	poll      time.Duration
	settle    time.Duration
	serverCPU int
	clientCPU int
	keep      bool
	commit    string
	cliFiles  int
	cliReps   int
	only      string
	burst     int
}

func main() {
	var o options
	flag.StringVar(&o.bin, "bin", "", "sitedrop binary (default: build one from this module into the temp dir)")
	flag.IntVar(&o.reps, "reps", 20, "timed deploys per size, and timed unchanged redeploys")
	flag.IntVar(&o.sites, "sites", 10000, "deployments to create for the memory, cold start and serving figures")
	flag.IntVar(&o.parallel, "parallel", 8, "parallel clients while creating the deployments")
	flag.StringVar(&o.duration, "duration", "10s", "length of each measured wrk run")
	flag.StringVar(&o.warmup, "warmup", "2s", "wrk warm-up per case before round 1 (0: none)")
	flag.IntVar(&o.rounds, "rounds", 3, "interleaved wrk rounds")
	flag.IntVar(&o.conns, "conns", 50, "wrk connections (one wrk thread)")
	flag.IntVar(&o.coldRuns, "cold-runs", 3, "cold starts timed per server")
	flag.DurationVar(&o.poll, "poll", 2*time.Millisecond, "poll interval while waiting for the first 200 of a cold start")
	flag.DurationVar(&o.settle, "settle", 2*time.Second, "wait before reading an idle RSS")
	flag.IntVar(&o.serverCPU, "server-cpu", 0, "CPU the servers are pinned to")
	flag.IntVar(&o.clientCPU, "client-cpu", 1, "CPU this program and wrk are pinned to")
	flag.BoolVar(&o.keep, "keep", false, "keep the temporary directory (data, logs)")
	flag.StringVar(&o.commit, "commit", "", "what -bin was built from, for the report (default: this module's git commit)")
	flag.IntVar(&o.cliFiles, "cli-files", 4000, "files of the site deployed with the CLI and as a zip by curl (0: skip that comparison)")
	flag.IntVar(&o.cliReps, "cli-reps", 3, "timed deploys of the CLI / curl zip comparison (a new site each)")
	flag.StringVar(&o.only, "only", "", `"cli": run only the CLI / curl zip comparison`)
	flag.IntVar(&o.burst, "burst", 400, "one-page deploys (new sites) sent by -parallel clients at once, for the deploys/s figure (0: skip)")
	flag.Parse()

	pinSelf(o.clientCPU)
	procs.watchSignals()
	err := run(&o)
	procs.stopAll()
	if err != nil {
		fmt.Fprintln(os.Stderr, "deploybench:", err)
		os.Exit(1)
	}
}

// pinSelf re-executes this program under taskset, pinned to cpu, unless it
// already runs that way. Threads inherit the affinity; a thread pinned after
// the fact would not.
func pinSelf(cpu int) {
	if os.Getenv("DEPLOYBENCH_PINNED") != "" {
		return
	}
	taskset, err := exec.LookPath("taskset")
	if err != nil {
		logf("taskset not found: the client runs unpinned")
		return
	}
	exe, err := os.Executable()
	if err != nil {
		logf("cannot re-execute pinned: %v", err)
		return
	}
	args := append([]string{"taskset", "-c", strconv.Itoa(cpu), exe}, os.Args[1:]...)
	env := append(os.Environ(), "DEPLOYBENCH_PINNED=1")
	err = syscall.Exec(taskset, args, env)
	logf("cannot re-execute pinned: %v", err)
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "==> "+format+"\n", args...)
}

// ---------------------------------------------------------------- processes

// proc is a started process; done is closed once it has exited and err
// holds what Wait returned.
type proc struct {
	cmd  *exec.Cmd
	done chan struct{}
	err  error
}

// procs tracks every process this program starts, so that they are all
// stopped on exit and on SIGINT/SIGTERM.
var procs = &registry{live: map[*proc]bool{}}

type registry struct {
	mu   sync.Mutex
	live map[*proc]bool
}

// start starts cmd and tracks it until it exits.
func (r *registry) start(cmd *exec.Cmd) (*proc, error) {
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &proc{cmd: cmd, done: make(chan struct{})}
	r.mu.Lock()
	r.live[p] = true
	r.mu.Unlock()
	go func() {
		p.err = cmd.Wait()
		r.mu.Lock()
		delete(r.live, p)
		r.mu.Unlock()
		close(p.done)
	}()
	return p, nil
}

func (r *registry) stopAll() {
	r.mu.Lock()
	ps := make([]*proc, 0, len(r.live))
	for p := range r.live {
		ps = append(ps, p)
	}
	r.mu.Unlock()
	for _, p := range ps {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
	}
	for _, p := range ps {
		p.stop(10 * time.Second)
	}
}

// stop sends SIGTERM, waits for the exit, and kills after timeout.
func (p *proc) stop(timeout time.Duration) {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(timeout):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

func (r *registry) watchSignals() {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		s := <-ch
		logf("%v: stopping", s)
		r.stopAll()
		if tmpRoot != "" && !keepTmp {
			_ = os.RemoveAll(tmpRoot)
		}
		os.Exit(130)
	}()
}

var (
	tmpRoot string
	keepTmp bool
)

// ---------------------------------------------------------------- server

type server struct {
	name string
	bin  string
	dir  string
	cpu  int
	port int
	key  string
	proc *proc
	log  *os.File
}

func newServer(name, bin, root string, cpu int) (*server, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	s := &server{name: name, bin: bin, dir: filepath.Join(root, name+"-data"), cpu: cpu, port: port}
	if out, err := exec.Command(bin, "--dir", s.dir, "user", "create", "bench@example.com", "--plan", "pro").CombinedOutput(); err != nil {
		return nil, fmt.Errorf("user create: %v: %s", err, out)
	}
	out, err := exec.Command(bin, "--dir", s.dir, "key", "create", "bench@example.com").Output()
	if err != nil {
		return nil, fmt.Errorf("key create: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	s.key = strings.TrimSpace(lines[len(lines)-1])
	if !strings.HasPrefix(s.key, "sd_") {
		return nil, fmt.Errorf("key create printed no key: %q", out)
	}
	s.log, err = os.Create(filepath.Join(root, name+".log"))
	if err != nil {
		return nil, err
	}
	return s, nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func (s *server) base() string { return fmt.Sprintf("http://127.0.0.1:%d", s.port) }

func (s *server) siteHost(slug string) string { return fmt.Sprintf("%s.localhost:%d", slug, s.port) }

// start execs the server and returns the moment just before the exec.
func (s *server) start(slots int) (time.Time, error) {
	c := exec.Command("taskset", "-c", strconv.Itoa(s.cpu), s.bin, "serve",
		"--http", fmt.Sprintf("127.0.0.1:%d", s.port), "--dir", s.dir,
		"--pro-slots", strconv.Itoa(slots),
		"--anon-deploys-per-hour", "-1", "--deploys-per-minute", "-1",
		// today's default, given so that a binary from before it (1000)
		// takes the CLI / curl zip comparison's site too
		"--max-files", "20000")
	c.Stdout, c.Stderr = s.log, s.log
	t0 := time.Now()
	p, err := procs.start(c)
	if err != nil {
		return t0, err
	}
	s.proc = p
	return t0, nil
}

// waitReady polls /api/health for up to 30 s.
func (s *server) waitReady() error {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := quickClient.Get(s.base() + "/api/health")
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if s.proc.exited() {
			return fmt.Errorf("%s exited: %v (see %s)", s.name, s.proc.err, s.log.Name())
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("%s not ready after 30 s (see %s)", s.name, s.log.Name())
}

// waitSite polls the site slug every poll until it answers 200, for up to
// 30 s, and returns when it did.
func (s *server) waitSite(slug string, poll time.Duration) (time.Time, error) {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		req, _ := http.NewRequest(http.MethodGet, s.base()+"/", nil)
		req.Host = s.siteHost(slug)
		resp, err := quickClient.Do(req)
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return time.Now(), nil
			}
		}
		if s.proc.exited() {
			return time.Time{}, fmt.Errorf("%s exited: %v (see %s)", s.name, s.proc.err, s.log.Name())
		}
		time.Sleep(poll)
	}
	return time.Time{}, fmt.Errorf("%s: site %s not served after 30 s", s.name, slug)
}

func (s *server) stop() {
	if s.proc == nil {
		return
	}
	s.proc.stop(30 * time.Second)
	s.proc = nil
}

// rss reads VmRSS of the running server, in bytes.
func (s *server) rss() (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.proc.cmd.Process.Pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb * 1024, err
		}
	}
	return 0, errors.New("no VmRSS")
}

// cpuTime is the CPU time the server has used so far, in user space and in
// the kernel (/proc/PID/stat, in clock ticks of 10 ms: Linux's USER_HZ).
// Per deploy, over a few hundred deploys, it is the figure the machine's
// other load skews least: a busy machine stretches a deploy's latency,
// not the work the server does for it.
func (s *server) cpuTime() (user, sys time.Duration, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", s.proc.cmd.Process.Pid))
	if err != nil {
		return 0, 0, err
	}
	st := string(b)
	i := strings.LastIndexByte(st, ')')
	if i < 0 {
		return 0, 0, errors.New("no ) in /proc/PID/stat")
	}
	f := strings.Fields(st[i+1:]) // state, ppid, … utime is field 14 of the line, 12 here
	if len(f) < 13 {
		return 0, 0, errors.New("short /proc/PID/stat")
	}
	u, err1 := strconv.ParseInt(f[11], 10, 64)
	k, err2 := strconv.ParseInt(f[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, 0, err
	}
	return time.Duration(u) * 10 * time.Millisecond, time.Duration(k) * 10 * time.Millisecond, nil
}

// cpuPer formats the server's CPU between (u0, k0) and (u1, k1) per
// deploy of n.
func cpuPer(u0, k0, u1, k1 time.Duration, n int) string {
	per := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / float64(n) }
	return fmt.Sprintf("%.2f ms (user %.2f + system %.2f)", per(u1-u0+k1-k0), per(u1-u0), per(k1-k0))
}

// ---------------------------------------------------------------- deploys

// quickClient polls: no keep-alive, so a restart is seen at once.
var quickClient = &http.Client{
	Timeout:   time.Second,
	Transport: &http.Transport{DisableKeepAlives: true, Proxy: nil},
}

// freshClient opens a new TCP connection for every request: the one-page
// deploys it sends show what a connection adds to a deploy.
var freshClient = &http.Client{
	Timeout:   time.Minute,
	Transport: &http.Transport{DisableKeepAlives: true, Proxy: nil},
}

var apiClient = &http.Client{
	Timeout: 5 * time.Minute,
	Transport: &http.Transport{
		Proxy:               nil,
		MaxIdleConns:        64,
		MaxIdleConnsPerHost: 64,
		IdleConnTimeout:     time.Minute,
	},
}

type fileEntry struct {
	Path        string `json:"path"`
	Content     string `json:"content"`
	ContentType string `json:"contentType,omitempty"`
}

type deployBody struct {
	Slug  string      `json:"slug,omitempty"`
	Files []fileEntry `json:"files"`
}

type deployAnswer struct {
	ID   string `json:"id"`
	Slug string `json:"slug"`
}

// call sends one API request with apiClient and times it, from before
// the request is written to after the answer is read.
func (s *server) call(method, path string, body []byte) ([]byte, time.Duration, error) {
	out, d, _, err := s.callOn(apiClient, method, path, body)
	return out, d, err
}

// callOn is call with client c; reused tells whether the request went
// over a connection that an earlier one had opened.
func (s *server) callOn(c *http.Client, method, path string, body []byte) (out []byte, d time.Duration, reused bool, err error) {
	req, err := http.NewRequest(method, s.base()+path, bytes.NewReader(body))
	if err != nil {
		return nil, 0, false, err
	}
	req.Header.Set("Authorization", "Bearer "+s.key)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
		GotConn: func(i httptrace.GotConnInfo) { reused = i.Reused },
	}))
	t0 := time.Now()
	resp, err := c.Do(req)
	if err != nil {
		return nil, 0, false, err
	}
	out, err = io.ReadAll(resp.Body)
	resp.Body.Close()
	d = time.Since(t0)
	if err != nil {
		return nil, d, reused, err
	}
	if resp.StatusCode != http.StatusOK {
		return out, d, reused, fmt.Errorf("%s %s: %d %s", method, path, resp.StatusCode, bytes.TrimSpace(out))
	}
	return out, d, reused, nil
}

// deploy creates a deployment of b with apiClient (its JSON is built
// before the clock starts).
func (s *server) deploy(b deployBody) (deployAnswer, time.Duration, error) {
	a, d, _, err := s.deployOn(apiClient, b)
	return a, d, err
}

// deployOn is deploy with client c; reused is callOn's.
func (s *server) deployOn(c *http.Client, b deployBody) (deployAnswer, time.Duration, bool, error) {
	body, err := json.Marshal(b)
	if err != nil {
		return deployAnswer{}, 0, false, err
	}
	out, d, reused, err := s.callOn(c, http.MethodPost, "/deploy", body)
	if err != nil {
		return deployAnswer{}, d, reused, err
	}
	var a deployAnswer
	err = json.Unmarshal(out, &a)
	return a, d, reused, err
}

// ---------------------------------------------------------------- content

// rng is xorshift64*: deterministic content, fixed across Go versions.
type rng uint64

func (r *rng) next() uint64 {
	x := uint64(*r)
	x ^= x >> 12
	x ^= x << 25
	x ^= x >> 27
	*r = rng(x)
	return x * 2685821657736338717
}

var words = strings.Fields(`the a site page deploy server request response file
content cache header status build static index layout theme style script
module export import render component state value option config account
user plan slot version manifest upload domain host path route link image
quick simple fast secure reliable modern light small clear every each with`)

// text returns n bytes of words, starting with a unique tag.
func text(r *rng, tag string, n int) string {
	var b strings.Builder
	b.WriteString(tag)
	for b.Len() < n {
		b.WriteByte(' ')
		b.WriteString(words[r.next()%uint64(len(words))])
	}
	return b.String()[:n]
}

// smallPage is a complete, small HTML page (~1 KB) whose text starts with
// tag.
func smallPage(tag string) string {
	r := rng(0x9E3779B97F4A7C15)
	return "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>Small page</title>\n</head>\n<body>\n<h1>" +
		tag + "</h1>\n<p>" + text(&r, tag, 800) + "</p>\n</body>\n</html>\n"
}

// files returns n files of size bytes each, unique to tag: HTML, CSS and
// JavaScript in turn, under a few folders.
func files(tag string, n, size int) []fileEntry {
	r := rng(0xD1B54A32D192ED03)
	for _, c := range tag {
		r = rng(uint64(r)*31 + uint64(c))
		r.next()
	}
	exts := []string{"html", "css", "js"}
	out := make([]fileEntry, n)
	for i := range out {
		out[i] = fileEntry{
			Path:    fmt.Sprintf("dir%d/file%04d.%s", i%10, i, exts[i%3]),
			Content: text(&r, fmt.Sprintf("%s-%d", tag, i), size),
		}
	}
	return out
}

// letters names i with four lowercase letters (aaaa, aaab, ...), for slugs.
func letters(i int) string {
	b := []byte("aaaa")
	for k := 3; k >= 0; k-- {
		b[k] = byte('a' + i%26)
		i /= 26
	}
	return string(b)
}

// ---------------------------------------------------------------- wrk

const reportLua = `
done = function(summary, latency, requests)
	local e = summary.errors
	io.write(string.format("BENCH rps=%.2f p50_us=%d p99_us=%d requests=%d bytes=%d errors=%d\n",
		summary.requests / (summary.duration / 1e6), latency:percentile(50), latency:percentile(99),
		summary.requests, summary.bytes, e.connect + e.read + e.write + e.status + e.timeout))
end
`

// spreadLua sends each request to the next site of a list, in turn.
const spreadLua = `
local reqs = {}
local i = 0
init = function(args)
	for slug in io.lines(args[2]) do
		reqs[#reqs + 1] = wrk.format("GET", "/", { ["Host"] = slug .. ".localhost:" .. args[1], ["Accept-Encoding"] = "gzip" })
	end
end
request = function()
	i = i % #reqs + 1
	return reqs[i]
end
` + reportLua

type wrkResult struct {
	rps    float64
	p99us  float64
	errors int
}

type wrkCase struct {
	label  string
	srv    *server
	script string   // Lua file
	args   []string // after the URL
	host   string   // Host header, for a single-site case
}

func runWrk(o *options, c wrkCase, dur string, logw io.Writer) (wrkResult, error) {
	args := []string{"-c", strconv.Itoa(o.clientCPU), "wrk", "-t", "1", "-c", strconv.Itoa(o.conns),
		"-d", dur, "--latency", "-s", c.script, "-H", "Accept-Encoding: gzip"}
	if c.host != "" {
		args = append(args, "-H", "Host: "+c.host)
	}
	args = append(args, c.srv.base()+"/")
	if len(c.args) > 0 {
		args = append(append(args, "--"), c.args...)
	}
	cmd := exec.Command("taskset", args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	p, err := procs.start(cmd)
	if err != nil {
		return wrkResult{}, err
	}
	<-p.done
	err = p.err
	fmt.Fprintf(logw, "## %s (%s)\n%s\n", c.label, dur, out.String())
	if err != nil {
		return wrkResult{}, fmt.Errorf("wrk %s: %v: %s", c.label, err, out.String())
	}
	var res wrkResult
	for _, line := range strings.Split(out.String(), "\n") {
		rest, ok := strings.CutPrefix(line, "BENCH ")
		if !ok {
			continue
		}
		for _, kv := range strings.Fields(rest) {
			k, v, _ := strings.Cut(kv, "=")
			f, _ := strconv.ParseFloat(v, 64)
			switch k {
			case "rps":
				res.rps = f
			case "p99_us":
				res.p99us = f
			case "errors":
				res.errors = int(f)
			}
		}
		return res, nil
	}
	return res, fmt.Errorf("wrk %s printed no result: %s", c.label, out.String())
}

// ---------------------------------------------------------------- stats

func percentile(ds []time.Duration, p float64) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	// nearest rank
	k := int(p/100*float64(len(s))+0.999999) - 1
	k = max(0, min(k, len(s)-1))
	return s[k]
}

func medianF(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	n := len(s)
	if n == 0 {
		return 0
	}
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

func ms(d time.Duration) string {
	switch {
	case d >= time.Second:
		return fmt.Sprintf("%.2f s", d.Seconds())
	default:
		return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000)
	}
}

func mb(b int64) string {
	return fmt.Sprintf("%.1f MB (%.1f MiB)", float64(b)/1e6, float64(b)/(1<<20))
}

func check(ok bool) string {
	if ok {
		return "✅"
	}
	return "❌"
}

// ---------------------------------------------------------------- run

type row struct{ what, value, target string }

func run(o *options) error {
	started := time.Now()
	loadBefore := loadAvg()
	if o.sites < 1 || o.reps < 1 || o.rounds < 1 || o.coldRuns < 1 {
		return errors.New("-sites, -reps, -rounds and -cold-runs must be at least 1")
	}
	if o.only != "" && o.only != "cli" {
		return fmt.Errorf("-only %q: the only section that runs alone is cli", o.only)
	}
	if o.only == "cli" && o.cliFiles < 1 {
		return errors.New("-only cli needs -cli-files")
	}
	if o.cliFiles > 0 && o.cliReps < 1 {
		return errors.New("-cli-reps must be at least 1")
	}
	if _, err := exec.LookPath("wrk"); err != nil && o.only == "" {
		return errors.New("wrk not found: install it (apt-get install wrk), or run bash bench/deploy.sh")
	}
	root, err := os.MkdirTemp("", "sitedrop-deploybench-")
	if err != nil {
		return err
	}
	tmpRoot, keepTmp = root, o.keep
	createsBefore := probeCreates(root)
	defer func() {
		procs.stopAll()
		if o.keep {
			logf("kept %s", root)
		} else {
			_ = os.RemoveAll(root)
		}
	}()
	if o.commit == "" && o.bin == "" {
		o.commit = gitCommit(moduleRoot())
	}
	if o.bin == "" {
		o.bin = filepath.Join(root, "sitedrop")
		logf("building sitedrop")
		cmd := exec.Command("go", "build", "-o", o.bin, ".")
		cmd.Dir, cmd.Stdout, cmd.Stderr = moduleRoot(), os.Stderr, os.Stderr
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOTOOLCHAIN=local")
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("go build: %v", err)
		}
	}
	wrkLog, err := os.Create(filepath.Join(root, "wrk.log"))
	if err != nil {
		return err
	}
	defer wrkLog.Close()
	slots := o.sites + 5*(o.reps+1) + o.burst + 10
	var rows []row
	add := func(what, value, target string) { rows = append(rows, row{what, value, target}) }
	if o.only == "cli" {
		logf("CLI / curl zip: %d files, %d reps", o.cliFiles, o.cliReps)
		if err := cliVsZip(o, root, add); err != nil {
			return err
		}
		printHeader(o, loadBefore, createsBefore)
		printRows(rows)
		fmt.Printf("\nTotal run time: %s.\n", time.Since(started).Round(time.Second))
		return nil
	}

	// 1. Server A, empty.
	a, err := newServer("a", o.bin, root, o.serverCPU)
	if err != nil {
		return err
	}
	if _, err := a.start(slots); err != nil {
		return err
	}
	if err := a.waitReady(); err != nil {
		return err
	}
	time.Sleep(o.settle)
	idle, err := a.rss()
	if err != nil {
		return err
	}
	logf("idle RSS %s", mb(idle))
	add("RSS, idle after start (no deployment)", mb(idle), "< 40 MB "+check(idle < 40e6))

	// 2. Deploy latency.
	var ids []string
	sizes := []struct {
		name  string
		n     int
		label string
	}{
		{"one", 1, "1 file (a small HTML page, ~1 KB)"},
		{"hundred", 100, "100 files of 2 KB"},
		{"thousand", 1000, "1000 files of 2 KB"},
	}
	var last deployBody
	var lastID string
	for _, sz := range sizes {
		var ds, fresh []time.Duration
		reused := 0
		u0, k0, err := a.cpuTime()
		if err != nil {
			return err
		}
		for i := 0; i <= o.reps; i++ { // i == 0: untimed warm-up
			slug := sz.name + "-" + letters(i)
			b := deployBody{Slug: slug}
			if sz.n == 1 {
				b.Files = []fileEntry{{Path: "index.html", Content: smallPage(slug), ContentType: "text/html"}}
			} else {
				b.Files = files(slug, sz.n, 2048)
			}
			ans, d, reuse, err := a.deployOn(apiClient, b)
			if err != nil {
				return err
			}
			ids = append(ids, ans.ID)
			if i > 0 {
				ds = append(ds, d)
				if reuse {
					reused++
				}
			}
			last, lastID = b, ans.ID
			if sz.n != 1 {
				continue
			}
			// the same page for a new site, on a new TCP connection
			slug = "fresh-" + letters(i)
			b = deployBody{Slug: slug, Files: []fileEntry{{Path: "index.html", Content: smallPage(slug), ContentType: "text/html"}}}
			ans, d, _, err = a.deployOn(freshClient, b)
			if err != nil {
				return err
			}
			ids = append(ids, ans.ID)
			if i > 0 {
				fresh = append(fresh, d)
			}
		}
		p50, p95 := percentile(ds, 50), percentile(ds, 95)
		logf("deploy %s: p50 %s p95 %s", sz.label, ms(p50), ms(p95))
		target := ""
		switch sz.n {
		case 1:
			target = "p50 < 2 ms " + check(p50 < 2*time.Millisecond)
		case 1000:
			target = "p50 < 400 ms " + check(p50 < 400*time.Millisecond)
		}
		what := fmt.Sprintf("deploy, %s: p50 / p95 of %d", sz.label, o.reps)
		if sz.n == 1 {
			what = fmt.Sprintf("deploy, %s, keep-alive (%d of %d on a reused connection): p50 / p95 of %d", sz.label, reused, o.reps, o.reps)
		}
		add(what, ms(p50)+" / "+ms(p95), target)
		if sz.n == 1 {
			u1, k1, err := a.cpuTime()
			if err != nil {
				return err
			}
			n := 2 * (o.reps + 1)
			logf("server CPU per one-page deploy: %s", cpuPer(u0, k0, u1, k1, n))
			add(fmt.Sprintf("server CPU per one-page deploy, the %d above and their warm-ups, right after the start", n), cpuPer(u0, k0, u1, k1, n), "")
			f50, f95 := percentile(fresh, 50), percentile(fresh, 95)
			logf("deploy %s, a new connection each: p50 %s p95 %s", sz.label, ms(f50), ms(f95))
			add(fmt.Sprintf("deploy, %s, a new TCP connection each (interleaved with the above): p50 / p95 of %d", sz.label, o.reps),
				ms(f50)+" / "+ms(f95), fmt.Sprintf("%+.1f ms over keep-alive", float64((f50-p50).Microseconds())/1000))
		}
	}
	last.Slug = ""
	body, err := json.Marshal(last)
	if err != nil {
		return err
	}
	var ds []time.Duration
	for i := 0; i < o.reps; i++ {
		_, d, err := a.call(http.MethodPut, "/deploy/"+lastID, body)
		if err != nil {
			return err
		}
		ds = append(ds, d)
	}
	logf("unchanged redeploy: p50 %s p95 %s", ms(percentile(ds, 50)), ms(percentile(ds, 95)))
	add(fmt.Sprintf("unchanged redeploy, PUT of the same 1000 files (%.1f MB of JSON): p50 / p95 of %d", float64(len(body))/1e6, o.reps),
		ms(percentile(ds, 50))+" / "+ms(percentile(ds, 95)), "p50 < 50 ms "+check(percentile(ds, 50) < 50*time.Millisecond))

	// 2a. One-page deploys of new sites from -parallel keep-alive clients
	// at once, on a server with few sites (the 10,000 creations below
	// measure the same while the sites grow).
	if o.burst > 0 {
		burst := make([]string, o.burst)
		for i := range burst {
			burst[i] = "burst-" + letters(i)
		}
		u0, k0, err := a.cpuTime()
		if err != nil {
			return err
		}
		t0 := time.Now()
		got, err := createSites(a, burst, o.parallel)
		if err != nil {
			return err
		}
		took := time.Since(t0)
		u1, k1, err := a.cpuTime()
		if err != nil {
			return err
		}
		ids = append(ids, got...)
		rate := float64(o.burst) / took.Seconds()
		logf("one-page deploys, %d clients: %.0f/s", o.parallel, rate)
		add(fmt.Sprintf("one-page deploys of new sites, %d concurrent keep-alive clients (%d deploys)", o.parallel, o.burst),
			fmt.Sprintf("%.0f deploys/s", rate), "≥ 500/s "+check(rate >= 500))
		add("server CPU per deploy of those", cpuPer(u0, k0, u1, k1, o.burst), "< 2 ms for 500/s on one core")
	}

	peak, err := a.rss()
	if err != nil {
		return err
	}
	add("RSS right after those deploys and redeploys", mb(peak), "")

	// 2b. A big site's first deploy: the CLI against one zip by curl, on
	// servers of their own.
	if o.cliFiles > 0 {
		logf("CLI / curl zip: %d files, %d reps", o.cliFiles, o.cliReps)
		if err := cliVsZip(o, root, add); err != nil {
			return err
		}
	}

	// 3. Many deployments, on a restarted server, so that the RSS shows what
	// they take rather than what the large deploys above left behind.
	for _, id := range ids {
		if _, _, err := a.call(http.MethodDelete, "/deploy/"+id, nil); err != nil {
			return err
		}
	}
	a.stop()
	if _, err := a.start(slots); err != nil {
		return err
	}
	if err := a.waitReady(); err != nil {
		return err
	}
	slugs := make([]string, o.sites)
	slugs[0] = "probe"
	for i := 1; i < o.sites; i++ {
		slugs[i] = "site-" + letters(i)
	}
	logf("creating %d deployments with %d parallel clients", o.sites, o.parallel)
	t0 := time.Now()
	if _, err := createSites(a, slugs, o.parallel); err != nil {
		return err
	}
	took := time.Since(t0)
	add(fmt.Sprintf("creating %d one-file deployments, %d parallel clients", o.sites, o.parallel),
		fmt.Sprintf("%.1f s (%.0f deploys/s)", took.Seconds(), float64(o.sites)/took.Seconds()), "")
	time.Sleep(o.settle)
	after, err := a.rss()
	if err != nil {
		return err
	}
	logf("RSS after %d deployments %s", o.sites, mb(after))
	add(fmt.Sprintf("RSS after creating %d deployments", o.sites), mb(after), "< 150 MB "+check(after < 150e6))

	// 4. Cold start of A.
	coldA, rssA, err := coldStarts(a, slots, o)
	if err != nil {
		return err
	}
	add(fmt.Sprintf("RSS, idle after a restart with %d deployments", o.sites), mb(rssA), "")

	// 5. Server B with the probe only.
	b, err := newServer("b", o.bin, root, o.serverCPU)
	if err != nil {
		return err
	}
	if _, err := b.start(slots); err != nil {
		return err
	}
	if err := b.waitReady(); err != nil {
		return err
	}
	if _, _, err := b.deploy(probeBody()); err != nil {
		return err
	}
	coldB, _, err := coldStarts(b, slots, o)
	if err != nil {
		return err
	}
	coldTarget := "< 300 ms " + check(medianD(coldA) < 300*time.Millisecond)
	add(fmt.Sprintf("cold start to the first 200, %d deployments: median (min–max of %d)", o.sites, o.coldRuns), coldSummary(coldA), coldTarget)
	add(fmt.Sprintf("cold start to the first 200, 1 deployment: median (min–max of %d)", o.coldRuns), coldSummary(coldB), "")

	// 6. Serving.
	script := filepath.Join(root, "report.lua")
	spread := filepath.Join(root, "spread.lua")
	slugFile := filepath.Join(root, "slugs.txt")
	for name, content := range map[string]string{script: reportLua, spread: spreadLua, slugFile: strings.Join(slugs, "\n") + "\n"} {
		if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
			return err
		}
	}
	cases := []wrkCase{
		{label: "one small page, 1 deployment", srv: b, script: script, host: b.siteHost("probe")},
		{label: fmt.Sprintf("one small page, %d deployments", o.sites), srv: a, script: script, host: a.siteHost("probe")},
		{label: fmt.Sprintf("every one of %d sites in turn, %d deployments", o.sites, o.sites), srv: a, script: spread,
			args: []string{strconv.Itoa(a.port), slugFile}},
	}
	if o.warmup != "0" && o.warmup != "0s" {
		logf("wrk warm-up, %s per case", o.warmup)
		for _, c := range cases {
			if _, err := runWrk(o, c, o.warmup, wrkLog); err != nil {
				return err
			}
		}
	}
	results := make([][]wrkResult, len(cases))
	for r := 1; r <= o.rounds; r++ {
		logf("wrk round %d/%d, %s per case", r, o.rounds, o.duration)
		for i, c := range cases {
			res, err := runWrk(o, c, o.duration, wrkLog)
			if err != nil {
				return err
			}
			results[i] = append(results[i], res)
		}
	}
	rssServed, err := a.rss()
	if err != nil {
		return err
	}
	add(fmt.Sprintf("RSS after serving every one of the %d sites", o.sites), mb(rssServed), "< 150 MB "+check(rssServed < 150e6))
	a.stop()
	b.stop()

	// 7. Report.
	printHeader(o, loadBefore, createsBefore)
	fmt.Printf("- wrk: -t 1 -c %d -d %s --latency -H 'Accept-Encoding: gzip'; %d interleaved rounds after a %s warm-up; medians over rounds\n",
		o.conns, o.duration, o.rounds, o.warmup)
	printRows(rows)
	fmt.Println()
	fmt.Println("| serving (GET /, Accept-Encoding: gzip) | req/s (median) | req/s per round | p99 (median) | errors | vs 1 deployment |")
	fmt.Println("|---|---:|---|---:|---:|---:|")
	base, noisy := 0.0, false
	for i, c := range cases {
		var rps, p99 []float64
		var rounds []string
		errs := 0
		for _, r := range results[i] {
			rps = append(rps, r.rps)
			p99 = append(p99, r.p99us)
			rounds = append(rounds, fmt.Sprintf("%.0f", r.rps))
			errs += r.errors
		}
		m := medianF(rps)
		if lo, hi := slices.Min(rps), slices.Max(rps); m > 0 && (hi-lo)/m > 0.15 {
			rounds[len(rounds)-1] += " ⚠"
			noisy = true
		}
		if i == 0 {
			base = m
		}
		ratio := m / base
		note := ""
		if i == 1 {
			note = " (target ≥ 0.90× " + check(ratio >= 0.9) + ")"
		}
		fmt.Printf("| %s | %.0f | %s | %s | %d | %.2f×%s |\n", c.label, m, strings.Join(rounds, " / "),
			ms(time.Duration(medianF(p99))*time.Microsecond), errs, ratio, note)
	}
	if noisy {
		fmt.Println("\n⚠ rounds more than 15% apart: something else used the CPUs (see the load averages); rerun with more -rounds or a longer -duration.")
	}
	el := time.Since(started).Round(time.Second)
	fmt.Printf("\nTotal run time: %s.\n", el)
	return nil
}

// printHeader prints the report's title and what it ran on.
func printHeader(o *options, loadBefore, createsBefore string) {
	fmt.Println()
	fmt.Println("## sitedrop deploy, memory and cold-start benchmark")
	fmt.Println()
	fmt.Printf("- date: %s\n", time.Now().UTC().Format("2006-01-02 15:04:05 UTC"))
	if o.commit == "" {
		o.commit = "unknown (a given -bin)"
	}
	fmt.Printf("- sitedrop commit: %s\n", o.commit)
	ncpu, model := cpuInfo()
	fmt.Printf("- machine: nproc %d, %s; servers pinned to CPU %d, this client, the CLI, curl and wrk to CPU %d\n", ncpu, model, o.serverCPU, o.clientCPU)
	fmt.Printf("- versions: %s, client %s\n", wrkVersion(), runtime.Version())
	fmt.Printf("- load average (1, 5, 15 min) before: %s; after: %s (other work on the machine skews the figures)\n", loadBefore, loadAvg())
	fmt.Printf("- a file's creation in the data folder, before the run: %s (ext4 without a journal slows it for minutes after many files were removed nearby: bench/README.md)\n", createsBefore)
	fmt.Println("- latencies are client-side over loopback (request written → answer read), one request at a time; the CLI and curl are timed from exec to exit")
}

// probeCreates times the creation of 200 small files in a new folder of
// dir, which it leaves (a removal would slow the run's own creations),
// and says how long one took.
func probeCreates(dir string) string {
	probe := filepath.Join(dir, "create-probe")
	if err := os.Mkdir(probe, 0o755); err != nil {
		return "not measured: " + err.Error()
	}
	const n = 200
	start := time.Now()
	for i := range n {
		f, err := os.OpenFile(filepath.Join(probe, strconv.Itoa(i)), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return "not measured: " + err.Error()
		}
		_, err = f.WriteString("probe")
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return "not measured: " + err.Error()
		}
	}
	return fmt.Sprintf("%d µs a file (%d files)", time.Since(start).Microseconds()/n, n)
}

// printRows prints the measures as a Markdown table.
func printRows(rows []row) {
	fmt.Println()
	fmt.Println("| measure | value | target |")
	fmt.Println("|---|---:|---|")
	for _, r := range rows {
		fmt.Printf("| %s | %s | %s |\n", r.what, r.value, r.target)
	}
}

func probeBody() deployBody {
	return deployBody{Slug: "probe", Files: []fileEntry{{Path: "index.html", Content: smallPage("probe"), ContentType: "text/html"}}}
}

// createSites deploys a one-page site for each slug from parallel
// keep-alive clients, and returns the new deployments' ids.
func createSites(s *server, slugs []string, parallel int) ([]string, error) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	next := make(chan string)
	errc := make(chan error, parallel)
	var (
		wg  sync.WaitGroup
		mu  sync.Mutex
		ids = make([]string, 0, len(slugs))
	)
	for w := 0; w < parallel; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for slug := range next {
				b := deployBody{Slug: slug, Files: []fileEntry{{Path: "index.html", Content: smallPage(slug), ContentType: "text/html"}}}
				if slug == "probe" {
					b = probeBody()
				}
				ans, _, err := s.deploy(b)
				if err != nil {
					errc <- err
					cancel()
					return
				}
				mu.Lock()
				ids = append(ids, ans.ID)
				mu.Unlock()
			}
		}()
	}
	progress := time.Now()
feed:
	for i, slug := range slugs {
		select {
		case next <- slug:
		case <-ctx.Done():
			break feed
		}
		if time.Since(progress) > 10*time.Second {
			logf("  %d/%d", i, len(slugs))
			progress = time.Now()
		}
	}
	close(next)
	wg.Wait()
	select {
	case err := <-errc:
		return nil, err
	default:
		return ids, nil
	}
}

// coldStarts stops s and starts it again o.coldRuns times, timing from exec
// to the first 200 of the probe site. It leaves s running, and returns the
// idle RSS after the last start.
func coldStarts(s *server, slots int, o *options) ([]time.Duration, int64, error) {
	var ds []time.Duration
	for i := 0; i < o.coldRuns; i++ {
		s.stop()
		t0, err := s.start(slots)
		if err != nil {
			return nil, 0, err
		}
		t1, err := s.waitSite("probe", o.poll)
		if err != nil {
			return nil, 0, err
		}
		ds = append(ds, t1.Sub(t0))
		logf("cold start of %s: %s", s.name, ms(t1.Sub(t0)))
		time.Sleep(300 * time.Millisecond)
	}
	time.Sleep(o.settle)
	rss, err := s.rss()
	return ds, rss, err
}

func medianD(ds []time.Duration) time.Duration { return percentile(ds, 50) }

func coldSummary(ds []time.Duration) string {
	lo, hi := ds[0], ds[0]
	for _, d := range ds {
		lo, hi = min(lo, d), max(hi, d)
	}
	return fmt.Sprintf("%s (%s–%s)", ms(medianD(ds)), ms(lo), ms(hi))
}

// gitCommit names the commit of the work tree at dir, marked when tracked
// files have changes.
func gitCommit(dir string) string {
	out, err := exec.Command("git", "-C", dir, "rev-parse", "--short=12", "HEAD").Output()
	if err != nil {
		return "unknown"
	}
	c := strings.TrimSpace(string(out))
	if st, err := exec.Command("git", "-C", dir, "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(bytes.TrimSpace(st)) > 0 {
		c += "+uncommitted changes"
	}
	return c
}

// cpuInfo counts the machine's CPUs (not only those this process may use)
// and names their model.
func cpuInfo() (int, string) {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return runtime.NumCPU(), "unknown CPU"
	}
	n, model := 0, "unknown CPU"
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		switch strings.TrimSpace(k) {
		case "processor":
			n++
		case "model name":
			model = strings.TrimSpace(v)
		}
	}
	return max(n, 1), model
}

func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

func wrkVersion() string {
	out, _ := exec.Command("wrk", "-v").CombinedOutput()
	f := strings.Fields(string(out))
	if len(f) >= 2 {
		return f[0] + " " + f[1]
	}
	return "wrk (unknown version)"
}

// moduleRoot is the directory of the go.mod this program belongs to.
func moduleRoot() string {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err == nil {
		if p := strings.TrimSpace(string(out)); p != "" && p != os.DevNull {
			return filepath.Dir(p)
		}
	}
	return "."
}
