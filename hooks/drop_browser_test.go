package hooks

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// The drop zone's states, watched from the page: a MutationObserver
// installed before the page's own scripts (recordDrop) logs every change of
// the zone's state, bars and texts, and requests are held in the browser
// (Fetch.requestPaused, holdRequests) where a test must see a state that
// lasts as long as a request does.

// dropStep is one logged look at the drop zone.
type dropStep struct {
	State     string  `json:"state"`
	Busy      bool    `json:"busy"`
	PrepLabel string  `json:"prepLabel"`
	PrepMax   float64 `json:"prepMax"`
	PrepValue float64 `json:"prepValue"`
	SendLabel string  `json:"sendLabel"`
	SendMax   float64 `json:"sendMax"`
	SendValue float64 `json:"sendValue"` // -1: moving (no value)
	Detail    string  `json:"detail"`
	Status    string  `json:"status"`
}

// recordDrop makes every page log its drop zone's changes in
// window.__drop (read them with dropLog).
func (b *browserEnv) recordDrop() {
	b.t.Helper()
	if _, err := chromedp.Call(b.Ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: `
window.__drop = [];
document.addEventListener("DOMContentLoaded", function () {
  var z = document.querySelector("[data-drop]");
  if (!z) return;
  var q = function (s) { return z.querySelector(s); };
  var rec = function () {
    var prep = q("[data-drop-prep]"), send = q("[data-drop-send]");
    var e = {state: z.getAttribute("data-state"), busy: z.classList.contains("busy"),
      prepLabel: q("[data-drop-prep-label]").textContent, prepMax: prep.max, prepValue: prep.value,
      sendLabel: q("[data-drop-send-label]").textContent, sendMax: send.max,
      sendValue: send.hasAttribute("value") ? send.value : -1,
      detail: q("[data-drop-detail]").textContent, status: q("[role=status]").textContent};
    var last = JSON.stringify(window.__drop[window.__drop.length - 1]);
    if (last !== JSON.stringify(e)) window.__drop.push(e);
  };
  new MutationObserver(rec).observe(z, {attributes: true, childList: true, characterData: true, subtree: true});
});`}); err != nil {
		b.Fail("install the drop recorder", err)
	}
}

// dropLog is what the drop zone showed so far, step by step.
func (b *browserEnv) dropLog() []dropStep {
	b.t.Helper()
	log, err := chromedp.Run(b.Ctx, chromedp.Evaluate[[]dropStep](`window.__drop`))
	if err != nil {
		b.Fail("read the drop log", err)
	}
	return log
}

// checkDropLog fails the test when the zone ever showed "0 of 0" or went
// through the states out of order; it returns the steps of each state.
func checkDropLog(t *testing.T, log []dropStep, order ...string) map[string][]dropStep {
	t.Helper()
	by := map[string][]dropStep{}
	rank := map[string]int{}
	for i, s := range order {
		rank[s] = i
	}
	last := -1
	for _, s := range log {
		if strings.Contains(s.Detail, "0 of 0") || strings.Contains(s.Status, "0 of 0") {
			t.Errorf("the zone showed %q / %q", s.Detail, s.Status)
		}
		by[s.State] = append(by[s.State], s)
		r, ok := rank[s.State]
		if !ok {
			t.Errorf("state %q, want only %v", s.State, order)
			continue
		}
		if r < last {
			t.Errorf("state %q after %q: want the order %v", s.State, order[last], order)
		}
		last = r
	}
	for _, s := range order {
		if len(by[s]) == 0 {
			t.Errorf("the zone never showed the state %q; it showed:\n%+v", s, log)
		}
	}
	return by
}

// held is a request the browser holds (see holdRequests).
type held struct {
	ID     fetch.RequestID
	Method string
	URL    string
}

// holdRequests makes the browser hold the requests whose URL matches
// pattern (Fetch.enable) and the method (any when ""), and sends the rest
// on; a held request goes on with release. The held ones come on the
// channel. They are held before they leave, or with stage
// fetch.RequestStageResponse once the server answered, the answer not
// yet given to the page.
func (b *browserEnv) holdRequests(pattern, method string, stage ...fetch.RequestStage) <-chan held {
	b.t.Helper()
	paused := make(chan *fetch.EventRequestPaused, 2000)
	if err := chromedp.Listen(b.Ctx, func(ev any) {
		if p, ok := ev.(*fetch.EventRequestPaused); ok {
			select {
			case paused <- p:
			default:
			}
		}
	}); err != nil {
		b.Fail("listen to paused requests", err)
	}
	p := &fetch.RequestPattern{URLPattern: pattern}
	if len(stage) > 0 {
		p.RequestStage = stage[0]
	}
	if _, err := chromedp.Call(b.Ctx, fetch.Enable, fetch.EnableParams{Patterns: []*fetch.RequestPattern{p}}); err != nil {
		b.Fail("hold requests", err)
	}
	out := make(chan held, 2000)
	go func() {
		for {
			select {
			case <-b.Ctx.Done():
				return
			case p := <-paused:
				if method == "" || p.Request.Method == method {
					out <- held{ID: p.RequestID, Method: p.Request.Method, URL: p.Request.URL}
					continue
				}
				chromedp.Call(b.Ctx, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: p.RequestID})
			}
		}
	}()
	return out
}

// release lets a held request go on to the server.
func (b *browserEnv) release(h held) {
	b.t.Helper()
	if _, err := chromedp.Call(b.Ctx, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: h.ID}); err != nil {
		b.Fail("release "+h.Method+" "+h.URL, err)
	}
}

// nextHeld is the next held request, failing the test after a while.
func (b *browserEnv) nextHeld(ch <-chan held, what string) held {
	b.t.Helper()
	select {
	case h := <-ch:
		return h
	case <-time.After(45 * time.Second):
		b.Fail("wait for "+what, fmt.Errorf("no such request"))
	}
	return held{}
}

// dropState waits until the drop zone is in state.
func dropState(state string) chromedp.Action[chromedp.Void] {
	return chromedp.Poll[chromedp.Void](`document.querySelector("[data-drop]").getAttribute("data-state") === "`+state+`"`,
		chromedp.WithPollingInterval(10*time.Millisecond))
}

// focused is the data-testid of the element that has the focus.
func (b *browserEnv) focused() string {
	b.t.Helper()
	id, err := chromedp.Run(b.Ctx, chromedp.Evaluate[string](`document.activeElement ? (document.activeElement.getAttribute("data-testid") || document.activeElement.tagName) : ""`))
	if err != nil {
		b.Fail("read the focus", err)
	}
	return id
}

// manyFiles is a site of n distinct pages of about 1 KB, and their bytes.
func manyFiles(n int) (map[string]string, int) {
	files := map[string]string{}
	total := 0
	for i := range n {
		body := fmt.Sprintf("<!doctype html><title>Page %d</title><p>%s</p>", i, strings.Repeat("lorem ipsum ", 80+i%7))
		files[fmt.Sprintf("p/%03d.html", i)] = body
		total += len(body)
	}
	files["index.html"] = "<!doctype html><title>Home</title><h1>Home</h1>"
	total += len(files["index.html"])
	return files, total
}

// TestBrowserDropWatchable: a 300-file drop shows where it is: hashing
// with its own bar in bytes, the upload in bytes, then "Publishing" with a
// moving bar while the server works on the deploy request (held here, as
// a slow server would), and the result, which gets the focus. "0 of 0"
// never shows.
func TestBrowserDropWatchable(t *testing.T) {
	b := newBrowserEnv(t, func(c *Config) { c.MaxFiles, c.MaxBody = 1000, 1<<20 })
	user := mustUser(t, b.App, "watch@example.com", "free", fixtureKey("watch"))
	b.SignIn(user)
	files, total := manyFiles(300)
	dir := writeTree(t, files)
	b.recordDrop()
	deploys := b.holdRequests("*/deploy", "POST")

	b.Step("choose a folder of 301 files", chromedp.Navigate(b.WebURL+"/account"), chromedp.WaitVisible(testid("drop-target")),
		chromedp.SetUploadFiles(testid("drop-folder"), []string{dir}))
	req := b.nextHeld(deploys, "the deploy request")
	b.Step("wait for Publishing", dropState("publishing"))
	shown, err := chromedp.Run(b.Ctx, chromedp.Evaluate[map[string]any](`(() => {
		const z = document.querySelector("[data-drop]"), send = z.querySelector("[data-drop-send]"), c = z.querySelector("[data-drop-cancel]");
		return {moving: !send.hasAttribute("value"), label: z.querySelector("[data-drop-send-label]").textContent,
			detail: z.querySelector("[data-drop-detail]").textContent, status: z.querySelector("[role=status]").textContent,
			barShown: getComputedStyle(send).visibility === "visible" && send.getBoundingClientRect().width > 100,
			cancel: getComputedStyle(c).visibility === "visible" && !c.disabled};
	})()`))
	if err != nil {
		b.Fail("read the publishing state", err)
	}
	if shown["moving"] != true || shown["label"] != "Publishing" || shown["barShown"] != true || shown["cancel"] != true ||
		!strings.HasPrefix(shown["detail"].(string), "Publishing 301 files (") || !strings.Contains(shown["detail"].(string), "the server checks, compresses and stores") ||
		!strings.HasPrefix(shown["status"].(string), "Publishing 301 files") {
		t.Fatalf("while the server works on the deploy the zone shows %v", shown)
	}
	b.release(req)
	b.dropWait()
	if s := b.Text(testid("drop-status")); !strings.Contains(s, "301 files deployed: 301 uploaded (") {
		t.Fatalf("status after the deploy: %q", s)
	}
	if f := b.focused(); f != "drop-result" {
		t.Fatalf("focus after the deploy on %q, want the result", f)
	}

	by := checkDropLog(t, b.dropLog(), "idle", "checking", "hashing", "uploading", "publishing", "done")
	if t.Failed() {
		t.FailNow()
	}
	hashing := by["hashing"]
	if h := hashing[len(hashing)-1]; h.PrepLabel != "Hashing" || int(h.PrepMax) != total || int(h.PrepValue) != total || h.Busy != true {
		t.Errorf("hashing ends at %+v, want its bar full at %d bytes", h, total)
	}
	midway := false
	for _, h := range hashing {
		midway = midway || (h.PrepValue > 0 && int(h.PrepValue) < total && strings.Contains(h.Detail, " of "))
	}
	if !midway {
		t.Errorf("the hashing bar never showed a part of the bytes: %+v", hashing)
	}
	up := by["uploading"]
	if u := up[len(up)-1]; u.SendLabel != "Upload" || int(u.SendMax) != total || int(u.SendValue) != total ||
		!strings.Contains(u.Detail, "301 of 301 files done") || !strings.Contains(u.Detail, "Uploading: ") {
		t.Errorf("the upload ends at %+v, want its bar full at %d bytes", u, total)
	}
	partial := false
	for _, u := range up {
		partial = partial || (u.SendValue > 0 && int(u.SendValue) < total)
	}
	if !partial {
		t.Errorf("the upload bar never showed a part of the bytes: %+v", up)
	}
}

// TestBrowserDropCancel: Cancel during the upload aborts it: nothing
// reaches the server's deploy, nothing is deployed, the zone says so and
// takes a new drop at once.
func TestBrowserDropCancel(t *testing.T) {
	b := newBrowserEnv(t, func(c *Config) { c.MaxFiles = 1000 })
	user := mustUser(t, b.App, "cancel@example.com", "free", fixtureKey("cancel"))
	b.SignIn(user)
	files, _ := manyFiles(40)
	b.recordDrop()
	uploads := b.holdRequests("*/blobs/*", "PUT")

	b.Step("choose a folder", chromedp.Navigate(b.WebURL+"/account"), chromedp.WaitVisible(testid("drop-target")),
		chromedp.SetUploadFiles(testid("drop-folder"), []string{writeTree(t, files)}))
	b.nextHeld(uploads, "an upload")
	b.Step("cancel mid-upload", dropState("uploading"), chromedp.Click(testid("drop-cancel")), dropState("cancelled"))
	if s := b.Text(testid("drop-status")); s != "Cancelled: nothing was deployed. Drop or choose files again when you are ready." {
		t.Fatalf("status after cancel: %q", s)
	}
	if n := b.Received.Count("PUT /blobs/") + b.Received.Count("POST /deploy"); n != 0 {
		t.Fatalf("%d uploads or deploys reached the server after a cancel mid-upload", n)
	}
	if _, err := b.App.FindFirstRecordByData("deployments", "owner", user.Id); err == nil {
		t.Fatal("a cancelled drop deployed a site")
	}
	if f := b.focused(); f != "drop-target" {
		t.Fatalf("focus after cancel on %q, want the drop target", f)
	}
	if b.Count(`[data-drop].busy`)+b.Count(`[data-testid=drop-error]:not([hidden])`) != 0 {
		t.Fatal("the zone is still busy, or shows an error, after a cancel")
	}

	if _, err := chromedp.Call(b.Ctx, fetch.Disable, struct{}{}); err != nil {
		b.Fail("stop holding requests", err)
	}
	b.Step("drop again", chromedp.SetUploadFiles(testid("drop-folder"), []string{writeTree(t, map[string]string{"index.html": "<h1>again</h1>"})}))
	live := b.dropWait()
	if code, body := b.liveFile(live, "/"); code != 200 || body != "<h1>again</h1>" {
		t.Fatalf("the drop after a cancel: %d %q", code, body)
	}
}

// TestBrowserDropCancelTooLate: a Cancel that comes once the server has
// finished the deploy (its answer held on the way back) does not pretend
// otherwise: the zone says the site is live, at its URL, and the site
// list shows it.
func TestBrowserDropCancelTooLate(t *testing.T) {
	b := newBrowserEnv(t)
	user := mustUser(t, b.App, "late@example.com", "free", fixtureKey("late"))
	b.SignIn(user)
	answers := b.holdRequests("*/deploy", "POST", fetch.RequestStageResponse)
	b.Step("choose a folder", chromedp.Navigate(b.WebURL+"/account"), chromedp.WaitVisible(testid("drop-target")),
		chromedp.SetUploadFiles(testid("drop-folder"), []string{writeTree(t, map[string]string{"index.html": "<h1>late</h1>"})}))
	b.nextHeld(answers, "the deploy's answer")
	b.Step("cancel too late", dropState("publishing"), chromedp.Click(testid("drop-cancel")), dropState("cancelled"))
	dep, err := b.App.FindFirstRecordByData("deployments", "owner", user.Id)
	if err != nil {
		t.Fatalf("the server had finished the deploy: %v", err)
	}
	live := b.SiteURL(dep.GetString("slug"))
	if s := b.Text(testid("drop-status")); s != "Too late to cancel: the deploy had already finished, and it is live at "+live+"." {
		t.Fatalf("status after a cancel too late: %q", s)
	}
	b.Step("wait for the list", chromedp.Poll[chromedp.Void](`document.querySelectorAll("#site-list [data-testid=deployment-row]").length === 1`,
		chromedp.WithPollingInterval(20*time.Millisecond)))
}

// TestBrowserDropAnonymousProgress: signed out, the bytes go inline in one
// request, and still the zone shows them read, then sent (a bar in bytes
// of the request), then published.
func TestBrowserDropAnonymousProgress(t *testing.T) {
	b := newBrowserEnv(t, func(c *Config) { c.MaxBody = 4 << 20 })
	big := strings.Repeat("0123456789abcdef", 40<<10) // 640 KiB
	index := "<!doctype html><title>Anon</title><h1>anon</h1>"
	dir := writeTree(t, map[string]string{"index.html": index, "data.txt": big})
	b.recordDrop()
	b.Step("choose a folder on the home page", chromedp.Navigate(b.WebURL+"/"), chromedp.WaitVisible(testid("drop-target")),
		chromedp.SetUploadFiles(testid("drop-folder"), []string{dir}))
	live := b.dropWait()
	if code, body := b.liveFile(live, "/data.txt"); code != 200 || body != big {
		t.Fatalf("anonymous site: %d, %d bytes", code, len(body))
	}
	by := checkDropLog(t, b.dropLog(), "idle", "reading", "uploading", "publishing", "done")
	if t.Failed() {
		t.FailNow()
	}
	r := by["reading"][len(by["reading"])-1]
	if r.PrepLabel != "Reading" || int(r.PrepValue) != len(big)+len(index) || int(r.PrepMax) != len(big)+len(index) {
		t.Errorf("reading ends at %+v", r)
	}
	u := by["uploading"][0]
	if !u.Busy || u.SendLabel != "Upload" || u.SendMax < float64(len(big)) || !strings.HasPrefix(u.Detail, "Uploading: ") {
		t.Errorf("the upload starts at %+v, want a bar of the request's bytes", u)
	}
	if p := by["publishing"][0]; p.SendValue != -1 || p.SendLabel != "Publishing" {
		t.Errorf("publishing shows %+v, want a moving bar", p)
	}
	if f := b.focused(); f != "drop-result" {
		t.Fatalf("focus after the deploy on %q, want the result", f)
	}
}

// TestBrowserDropRefreshesSiteList: after a drop on the account page, the
// site list shows the new site (the page's data-refresh parts are
// replaced by fresh ones) and the focus stays on the result.
func TestBrowserDropRefreshesSiteList(t *testing.T) {
	b := newBrowserEnv(t)
	user := mustUser(t, b.App, "fresh@example.com", "free", fixtureKey("fresh"))
	b.SignIn(user)
	b.Step("open the account page", chromedp.Navigate(b.WebURL+"/account"), chromedp.WaitVisible(testid("drop-target")))
	if s := b.Text(chromedp.CSS("#site-list")); !strings.Contains(s, "No sites yet") {
		t.Fatalf("a new account's list: %q", s)
	}
	b.Step("drop a folder", chromedp.SetUploadFiles(testid("drop-folder"), []string{writeTree(t, map[string]string{"index.html": "<h1>fresh</h1>"})}))
	live := b.dropWait()
	b.Step("wait for the list", chromedp.Poll[chromedp.Void](`document.querySelectorAll("#site-list [data-testid=deployment-row]").length === 1`,
		chromedp.WithPollingInterval(20*time.Millisecond)))
	s := b.Text(chromedp.CSS("#site-list"))
	if strings.Contains(s, "No sites yet") || !strings.Contains(s, strings.TrimSuffix(live, "/")) ||
		!strings.Contains(s, "1 of 5 sites used") {
		t.Fatalf("the list after the drop: %q", s)
	}
	if b.Count(`#site-list[data-refresh]`) != 1 {
		t.Fatal("the fresh list lost its data-refresh mark")
	}
	if f := b.focused(); f != "drop-result" {
		t.Fatalf("focus after the refresh on %q, want the result", f)
	}
	if n := b.Received.Count("GET /account"); n != 2 {
		t.Fatalf("%d GET /account, want the page and its one refresh", n)
	}
}

// TestBrowserDropKeyboard: the drop zone is one stop of the keyboard
// ("or browse" in it is not another); Enter and Space on it open the
// folder chooser, and a folder chosen there is deployed, the focus then
// on the result.
func TestBrowserDropKeyboard(t *testing.T) {
	b := newBrowserEnv(t)
	user := mustUser(t, b.App, "keys@example.com", "free", fixtureKey("keys"))
	b.SignIn(user)
	choosers := make(chan *page.EventFileChooserOpened, 4)
	if err := chromedp.Listen(b.Ctx, func(ev any) {
		if c, ok := ev.(*page.EventFileChooserOpened); ok {
			select {
			case choosers <- c:
			default:
			}
		}
	}); err != nil {
		b.Fail("listen to file choosers", err)
	}
	b.Step("open the account page", chromedp.Navigate(b.WebURL+"/account"), chromedp.WaitVisible(testid("drop-target")))
	if _, err := chromedp.Call(b.Ctx, page.SetInterceptFileChooserDialog, page.SetInterceptFileChooserDialogParams{Enabled: true}); err != nil {
		b.Fail("intercept file choosers", err)
	}
	stops, err := chromedp.Run(b.Ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("[data-drop] *")).filter(el =>
		el.tabIndex >= 0 && !el.disabled && el.getClientRects().length > 0 && getComputedStyle(el).visibility === "visible"
	).map(el => el.getAttribute("data-testid") || el.tagName)`))
	if err != nil {
		b.Fail("list the zone's tab stops", err)
	}
	if strings.Join(stops, ",") != "drop-target,drop-files" {
		t.Fatalf("the zone's tab stops: %v, want the target and the files button", stops)
	}
	// Tab from the top of the page to the zone
	for i := 0; i < 30 && b.focused() != "drop-target"; i++ {
		b.Step("tab", chromedp.KeyEvent(kb.Tab))
	}
	if f := b.focused(); f != "drop-target" {
		t.Fatalf("tabbing never reached the drop zone (at %q)", f)
	}
	b.Step("tab on", chromedp.KeyEvent(kb.Tab))
	if f := b.focused(); f != "drop-files" {
		t.Fatalf("the tab after the zone is %q, want the files button", f)
	}
	b.Step("tab back", chromedp.KeyEvent(kb.Tab, chromedp.KeyModifiers(chromedp.ModifierShift)))

	// (chromedp's own node of the input: DOM.getDocument would reset the
	// nodes it tracks)
	inputs, err := chromedp.Run(b.Ctx, chromedp.Nodes(chromedp.CSS("#drop-folder")))
	if err != nil || len(inputs) != 1 {
		b.Fail("find the folder input", err)
	}
	folder := inputs[0].BackendNodeID

	b.Step("press Space", chromedp.KeyEvent(" "))
	c := waitChooser(b, choosers)
	if c.BackendNodeID != folder {
		t.Fatalf("Space opened the chooser of node %d, want the folder input's %d", c.BackendNodeID, folder)
	}
	// the chooser closed without a choice: nothing happens
	if _, err := chromedp.Call(b.Ctx, dom.SetFileInputFiles, dom.SetFileInputFilesParams{Files: []string{}, BackendNodeID: c.BackendNodeID}); err != nil {
		b.Fail("close the chooser", err)
	}
	if f := b.focused(); f != "drop-target" {
		t.Fatalf("focus after a chooser closed on %q", f)
	}
	b.Step("press Enter", chromedp.KeyEvent(kb.Enter))
	c = waitChooser(b, choosers)
	if c.BackendNodeID != folder {
		t.Fatalf("Enter opened the chooser of node %d, want the folder input's %d", c.BackendNodeID, folder)
	}
	dir := writeTree(t, map[string]string{"index.html": "<h1>by keyboard</h1>"})
	if _, err := chromedp.Call(b.Ctx, dom.SetFileInputFiles, dom.SetFileInputFilesParams{Files: []string{dir}, BackendNodeID: c.BackendNodeID}); err != nil {
		b.Fail("choose the folder", err)
	}
	live := b.dropWait()
	if code, body := b.liveFile(live, "/"); code != 200 || body != "<h1>by keyboard</h1>" {
		t.Fatalf("the site chosen by keyboard: %d %q", code, body)
	}
	if f := b.focused(); f != "drop-result" {
		t.Fatalf("focus after the deploy on %q, want the result", f)
	}
}

// waitChooser is the next file chooser the page opened.
func waitChooser(b *browserEnv, ch <-chan *page.EventFileChooserOpened) *page.EventFileChooserOpened {
	b.t.Helper()
	select {
	case c := <-ch:
		return c
	case <-time.After(10 * time.Second):
		b.Fail("wait for the file chooser", fmt.Errorf("none opened"))
	}
	return nil
}

// TestBrowserDropZoneNoLayoutShift: at 390 px, with the scripts arriving
// late (as on a slow phone network), the pages with a drop zone do not
// move after their first paint: cumulative layout shift under 0.05.
func TestBrowserDropZoneNoLayoutShift(t *testing.T) {
	b := newBrowserEnv(t)
	user := mustUser(t, b.App, "still@example.com", "free", fixtureKey("still"))
	b.SignIn(user)
	dep := mustDeploy(t, b.SD, user, "stillsite000001", "still-site", "<h1>still</h1>", "Still")
	if _, err := chromedp.Call(b.Ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: `
window.__cls = 0;
new PerformanceObserver(function (list) {
  list.getEntries().forEach(function (e) { if (!e.hadRecentInput) window.__cls += e.value; });
}).observe({type: "layout-shift", buffered: true});`}); err != nil {
		b.Fail("install the layout shift observer", err)
	}
	// the deferred scripts come 400 ms late; the page is drawn before
	scripts := b.holdRequests("*/static/*.js", "")
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			case h := <-scripts:
				go func() {
					if strings.HasSuffix(h.URL, "/static/js.js") {
						b.release(h) // blocking in the head: nothing is drawn before it
						return
					}
					time.Sleep(400 * time.Millisecond)
					chromedp.Call(b.Ctx, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: h.ID})
				}()
			}
		}
	}()
	defer func() { close(stop); wg.Wait() }()
	b.Step("a phone's width", chromedp.EmulateViewport(390, 844))
	for _, path := range []string{"/", "/account", "/account/sites/" + dep.Id} {
		// Navigate returns after the load event: the deferred scripts ran
		b.Step("open "+path, chromedp.Navigate(b.WebURL+path), chromedp.WaitVisible(testid("drop-target")))
		cls, err := chromedp.Run(b.Ctx, chromedp.Evaluate[float64](`new Promise(r => setTimeout(() => r(window.__cls), 300))`, chromedp.EvalAwaitPromise))
		if err != nil {
			b.Fail("read the layout shift of "+path, err)
		}
		t.Logf("%s at 390 px: cumulative layout shift %.4f", path, cls)
		if cls >= 0.05 {
			t.Errorf("%s at 390 px: cumulative layout shift %.3f, want < 0.05", path, cls)
		}
	}
}
