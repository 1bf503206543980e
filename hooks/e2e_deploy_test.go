package hooks

import (
	"archive/zip"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
)

// The drop zone's tests drive real drags and drops (Input.dispatchDragEvent
// with DragData.Files: a folder's path, read by the page through
// webkitGetAsEntry, or a zip's) and choose folders with the webkitdirectory
// input (DOM.setFileInputFiles with a directory path, as a person picking a
// folder does).

// writeTree writes files (site path → content) under a new temporary
// folder and returns it.
func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "my-site")
	for p, content := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// nestedSite is a folder with nested files and a dotfile the page skips.
var nestedSite = map[string]string{
	"index.html":        "<!doctype html><title>Dropped</title><h1>Dropped</h1>",
	"css/site.css":      "body { color: teal; }",
	"img/a/b/logo.png":  "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x01\xff",
	".env":              "SECRET=do-not-publish",
	"docs/about.html":   "<p>about</p>",
	".git/config":       "[core]",
	".well-known/x.txt": "kept",
}

// dropWait waits until the drop zone shows its outcome and returns the
// live URL, failing the test on an error shown instead.
func (b *browserEnv) dropWait() string {
	b.t.Helper()
	b.Step("wait for the deploy", chromedp.Poll[chromedp.Void](
		`!document.querySelector('[data-testid=drop-result]').hidden || !document.querySelector('[data-testid=drop-error]').hidden`))
	if b.Count(`[data-testid=drop-error]:not([hidden])`) > 0 {
		b.t.Fatalf("the drop zone shows an error: %s", b.Text(testid("drop-error")))
	}
	return b.Text(testid("drop-url"))
}

// liveFile fetches path of the site at siteURL (http://slug.localhost:PORT/).
func (b *browserEnv) liveFile(siteURL, path string) (int, string) {
	b.t.Helper()
	u, err := url.Parse(siteURL)
	if err != nil {
		b.t.Fatalf("live URL %q: %v", siteURL, err)
	}
	return siteGet(b.t, b.App, u.Hostname(), path)
}

// TestBrowserDropDeployFolder: a signed-in drop of a folder deploys every
// file but the hidden ones to the account; re-deploying it from the site
// page (chosen with "Choose a folder") with one file changed uploads only
// that file.
func TestBrowserDropDeployFolder(t *testing.T) {
	b := newBrowserEnv(t)
	user := mustUser(t, b.App, "dropper@example.com", "free", fixtureKey("dropper"))
	b.SignIn(user)
	dir := writeTree(t, nestedSite)

	b.Step("open the account page", chromedp.Navigate(b.WebURL+"/account"), chromedp.WaitVisible(testid("drop-target")))
	b.dropFiles(testid("drop-target"), dir) // read with webkitGetAsEntry
	live := b.dropWait()
	status := b.Text(testid("drop-status"))
	if !strings.Contains(status, "5 files deployed: 5 uploaded (") || !strings.Contains(status, "0 already on the server") ||
		!strings.Contains(status, "2 hidden files or folders skipped") {
		t.Fatalf("status after the first deploy: %q", status)
	}
	if n := b.Received.Count("PUT /blobs/"); n != 5 {
		t.Fatalf("first deploy: %d uploads, want 5", n)
	}
	for p, want := range nestedSite {
		// HTML by its clean URL (the .html path redirects to it)
		urlPath := strings.TrimSuffix(strings.TrimSuffix("/"+p, ".html"), "index")
		code, body := b.liveFile(live, urlPath)
		hiddenFile := strings.HasPrefix(p, ".") && !strings.HasPrefix(p, ".well-known")
		switch {
		case hiddenFile && code != 404:
			t.Errorf("%s: %d, want 404 (skipped)", p, code)
		case !hiddenFile && (code != 200 || body != want):
			t.Errorf("%s: %d %q, want %q", p, code, body, want)
		}
	}
	dep, err := b.App.FindFirstRecordByData("deployments", "owner", user.Id)
	if err != nil {
		t.Fatalf("the dropped site does not belong to the account: %v", err)
	}
	if b.Text(testid("drop-open")) != "Open site" || b.Count(`[data-drop-claim]:not([hidden])`) != 0 {
		t.Fatal("an owned deploy offers Open site and no claim link")
	}

	if err := os.WriteFile(filepath.Join(dir, "css", "site.css"), []byte("body { color: navy; }"), 0o644); err != nil {
		t.Fatal(err)
	}
	before := b.Received.Count("PUT /blobs/")
	b.Step("choose it again on the site page",
		chromedp.Navigate(b.WebURL+"/account/sites/"+dep.Id), chromedp.WaitVisible(testid("drop-target")),
		chromedp.SetUploadFiles(testid("drop-folder"), []string{dir}))
	if again := b.dropWait(); again != live {
		t.Fatalf("re-deploy answered %s, want the same site %s", again, live)
	}
	if n := b.Received.Count("PUT /blobs/") - before; n != 1 {
		t.Fatalf("re-deploy uploaded %d contents, want only the changed one", n)
	}
	if s := b.Text(testid("drop-status")); !strings.Contains(s, "1 uploaded (21 bytes), 4 already on the server") {
		t.Fatalf("status after the re-deploy: %q", s)
	}
	b.Step("narrow the window", chromedp.EmulateViewport(390, 844))
	if w, err := chromedp.Run(b.Ctx, chromedp.Evaluate[int](`document.documentElement.scrollWidth`)); err != nil || w > 390 {
		t.Fatalf("the site page with a deploy result is %d px wide at 390 (%v)", w, err)
	}
	if code, body := b.liveFile(live, "/css/site.css"); code != 200 || body != "body { color: navy; }" {
		t.Fatalf("changed file: %d %q", code, body)
	}
	if code, body := b.liveFile(live, "/img/a/b/logo.png"); code != 200 || body != nestedSite["img/a/b/logo.png"] {
		t.Fatalf("unchanged file after the re-deploy: %d %q", code, body)
	}
}

// TestBrowserDropDeployAnonymous: signed out, the home page's drop zone
// makes an anonymous site and shows a claim link that opens its claim page.
func TestBrowserDropDeployAnonymous(t *testing.T) {
	b := newBrowserEnv(t)
	dir := writeTree(t, map[string]string{"index.html": `<h1>anon drop</h1><a href="/gone.html">x</a>`, "a/b.txt": "b"})
	b.Step("choose a folder on the home page",
		chromedp.Navigate(b.WebURL+"/"), chromedp.WaitVisible(testid("drop-target")),
		chromedp.SetUploadFiles(testid("drop-folder"), []string{dir}))
	live := b.dropWait()
	if code, body := b.liveFile(live, "/"); code != 200 || !strings.Contains(body, "<h1>anon drop</h1>") {
		t.Fatalf("anonymous site: %d %q", code, body)
	}
	if n := b.Received.Count("PUT /blobs/"); n != 0 {
		t.Fatalf("an anonymous deploy uploaded %d blobs: its bytes go inline", n)
	}
	// the deploy's quality report: the page has no title and a broken link
	if s := b.Text(testid("drop-report")); !strings.Contains(s, "1 broken link (first: index.html → /gone.html)") ||
		!strings.Contains(s, "1 page without a title (first: index.html)") {
		t.Fatalf("quality report on the page: %q", s)
	}
	claim := b.Text(testid("drop-claim-link"))
	if !strings.Contains(claim, "/claim/") || !strings.Contains(claim, "token=") {
		t.Fatalf("claim link %q", claim)
	}
	if s := b.Text(chromedp.CSS(`[data-drop-claim]`)); !strings.Contains(s, "expires in 24 hours unless claimed") {
		t.Fatalf("claim note %q", s)
	}
	// long URLs wrap on a phone
	b.Step("narrow the window", chromedp.EmulateViewport(390, 844))
	if w, err := chromedp.Run(b.Ctx, chromedp.Evaluate[int](`document.documentElement.scrollWidth`)); err != nil || w > 390 {
		t.Fatalf("the home page with a deploy result is %d px wide at 390 (%v)", w, err)
	}
	b.Step("follow the claim link", chromedp.Navigate(claim), chromedp.WaitVisible(testid("site-link")))
	if s := b.Text(testid("site-link")); !strings.Contains(live, strings.TrimSuffix(strings.TrimPrefix(s, "http://"), "/")) {
		t.Fatalf("claim page shows %q for %s", s, live)
	}
}

// TestBrowserDropDeployZip: a zip dropped on the account page (a real
// drag and drop) is deployed as it is; chosen with "Choose a zip" on the
// site page, it replaces that site.
func TestBrowserDropDeployZip(t *testing.T) {
	b := newBrowserEnv(t)
	user := mustUser(t, b.App, "zipper@example.com", "free", fixtureKey("zipper"))
	b.SignIn(user)
	zipPath := filepath.Join(t.TempDir(), "site.zip")
	f, err := os.Create(zipPath)
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(f)
	for name, body := range map[string]string{"index.html": "<h1>zipped</h1>", "js/app.js": "console.log(1)"} {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(body))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()

	b.Step("open the account page", chromedp.Navigate(b.WebURL+"/account"), chromedp.WaitVisible(testid("drop-target")))
	b.dropFiles(testid("drop-target"), zipPath)
	live := b.dropWait()
	if code, body := b.liveFile(live, "/js/app.js"); code != 200 || body != "console.log(1)" {
		t.Fatalf("zipped file: %d %q", code, body)
	}
	if n := b.Received.Count("POST /deploy"); n != 1 {
		t.Fatalf("%d deploy requests, want the zip in one", n)
	}
	dep, err := b.App.FindFirstRecordByData("deployments", "owner", user.Id)
	if err != nil {
		t.Fatalf("the zip's site does not belong to the account: %v", err)
	}

	// the same zip chosen on the site page replaces that site's content
	b.Step("choose the zip on the site page",
		chromedp.Navigate(b.WebURL+"/account/sites/"+dep.Id), chromedp.WaitVisible(testid("drop-target")),
		chromedp.SetUploadFiles(testid("drop-zip"), []string{zipPath}))
	if again := b.dropWait(); again != live {
		t.Fatalf("re-deploy answered %s, want %s", again, live)
	}
	if n := b.Received.Count("PUT /deploy/" + dep.Id); n != 1 {
		t.Fatalf("%d PUT /deploy/{id} requests, want 1", n)
	}
}

// dropFiles drags files from outside the page and drops them on sel, as a
// person dragging from the file manager.
func (b *browserEnv) dropFiles(sel chromedp.CSS, files ...string) {
	b.t.Helper()
	pos, err := chromedp.Run(b.Ctx, chromedp.Evaluate[[]float64](`(() => {
		const el = document.querySelector(`+strconv.Quote(string(sel))+`);
		el.scrollIntoView({block: "center"});
		const r = el.getBoundingClientRect();
		return [r.left + r.width / 2, r.top + r.height / 2];
	})()`))
	if err != nil || len(pos) != 2 {
		b.Fail("find the drop target", err)
	}
	data := &input.DragData{Items: []*input.DragDataItem{}, Files: files, DragOperationsMask: 1}
	for _, typ := range []input.DispatchDragEventType{input.DispatchDragEventTypeDragEnter, input.DispatchDragEventTypeDragOver, input.DispatchDragEventTypeDrop} {
		if _, err := chromedp.Call(b.Ctx, input.DispatchDragEvent, input.DispatchDragEventParams{
			Type: typ, X: pos[0], Y: pos[1], Data: data,
		}); err != nil {
			b.Fail("drag "+string(typ), err)
		}
	}
}
