package hooks

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"net/http"
	"strings"
	"testing"

	"github.com/pocketbase/pocketbase/tests"
)

func zipOf(t testing.TB, files ...string) *bytes.Reader {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for i := 0; i < len(files); i += 2 {
		w, err := zw.Create(files[i])
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(files[i+1]))
	}
	zw.Close()
	return bytes.NewReader(buf.Bytes())
}

func tarGzOf(t testing.TB, files ...string) *bytes.Reader {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for i := 0; i < len(files); i += 2 {
		tw.WriteHeader(&tar.Header{Name: files[i], Mode: 0o644, Size: int64(len(files[i+1])), Typeflag: tar.TypeReg})
		tw.Write([]byte(files[i+1]))
	}
	tw.Close()
	gz.Close()
	return bytes.NewReader(buf.Bytes())
}

func TestArchiveDeploys(t *testing.T) {
	zipHeaders := withHeaders(bearer(keyPia), map[string]string{"Content-Type": "application/zip"})
	tarHeaders := withHeaders(bearer(keyPia), map[string]string{"Content-Type": "application/gzip"})
	noNewDeployment := func(t testing.TB, app *tests.TestApp, _ *http.Response) {
		if n, _ := app.CountRecords("deployments"); n != 4 {
			t.Fatalf("a refused archive created a deployment (%d)", n)
		}
	}
	runScenarios(t, []tests.ApiScenario{
		{
			Name:            "zip with metadata in the query",
			Method:          http.MethodPost,
			URL:             "/deploy?slug=from-zip&title=Zipped&is_spa=true",
			Headers:         zipHeaders,
			Body:            zipOf(t, "build/index.html", "<p>zipped</p>", "build/css/a.css", "a{}"),
			ExpectedStatus:  200,
			ExpectedContent: []string{`"slug":"from-zip"`, `"url":"http://from-zip.sites.test/"`},
			TestAppFactory:  newTestApp,
			AfterTestFunc: func(t testing.TB, app *tests.TestApp, _ *http.Response) {
				if code, b := siteGet(t, app, "from-zip.sites.test", "/"); code != 200 || !strings.Contains(b, "<title>Zipped</title>") || !strings.Contains(b, "zipped") {
					t.Fatalf("site: %d %q", code, b)
				}
				if code, b := siteGet(t, app, "from-zip.sites.test", "/css/a.css"); code != 200 || b != "a{}" {
					t.Fatalf("the top folder was not stripped: %d %q", code, b)
				}
				if code, _ := siteGet(t, app, "from-zip.sites.test", "/some/route"); code != 200 {
					t.Fatalf("is_spa from the query was not applied: %d", code)
				}
			},
		},
		{
			Name:            "tar.gz replaces a site",
			Method:          http.MethodPut,
			URL:             "/deploy/" + idAliceSite,
			Headers:         withHeaders(bearer(keyAlice), map[string]string{"Content-Type": "application/gzip"}),
			Body:            tarGzOf(t, "index.html", "<p>from tar</p>"),
			ExpectedStatus:  200,
			ExpectedContent: []string{`"slug":"alice-site"`},
			TestAppFactory:  newTestApp,
			AfterTestFunc: func(t testing.TB, app *tests.TestApp, _ *http.Response) {
				if _, b := siteGet(t, app, "alice-site.sites.test", "/"); !strings.Contains(b, "from tar") {
					t.Fatalf("site: %q", b)
				}
			},
		},
		{
			Name:            "zip slip is refused and stores nothing",
			Method:          http.MethodPost,
			URL:             "/deploy",
			Headers:         zipHeaders,
			Body:            zipOf(t, "index.html", "x", "../evil.html", "x"),
			ExpectedStatus:  400,
			ExpectedContent: []string{`{"error":"archive entry \"../evil.html\" leaves the archive (..)"}`},
			TestAppFactory:  newTestApp,
			AfterTestFunc:   noNewDeployment,
		},
		{
			Name:            "an archive bomb is refused",
			Method:          http.MethodPost,
			URL:             "/deploy",
			Headers:         zipHeaders,
			Body:            zipOf(t, "big.txt", strings.Repeat("0", 4*64<<10+1)),
			ExpectedStatus:  413,
			ExpectedContent: []string{`"error":"Archive too large when unpacked: the limit is 256 KiB"`},
			TestAppFactory:  newTestApp,
			AfterTestFunc:   noNewDeployment,
		},
		{
			Name:            "an archive sent as JSON gets a hint",
			Method:          http.MethodPost,
			URL:             "/deploy",
			Headers:         bearer(keyPia),
			Body:            zipOf(t, "index.html", "<p>hi</p>"),
			ExpectedStatus:  400,
			ExpectedContent: []string{errBody("The body is a zip archive, not JSON: send it with Content-Type: application/zip")},
			TestAppFactory:  newTestApp,
			AfterTestFunc:   noNewDeployment,
		},
		{
			Name:            "a tar.gz sent as JSON gets a hint",
			Method:          http.MethodPost,
			URL:             "/deploy",
			Headers:         bearer(keyPia),
			Body:            bytes.NewReader([]byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0}),
			ExpectedStatus:  400,
			ExpectedContent: []string{errBody("The body is a gzip file (.tar.gz?), not JSON: send it with Content-Type: application/gzip")},
			TestAppFactory:  newTestApp,
			AfterTestFunc:   noNewDeployment,
		},
		{
			Name:            "a taken slug is refused before the archive is read",
			Method:          http.MethodPost,
			URL:             "/deploy?slug=alice-site",
			Headers:         withHeaders(zipHeaders, bearer(keyBob)),
			Body:            strings.NewReader("not an archive at all"),
			ExpectedStatus:  409,
			ExpectedContent: []string{errBody(msgSlugTaken)},
			TestAppFactory:  newTestApp,
			AfterTestFunc:   noNewDeployment,
		},
		{
			Name:            "a reserved slug is refused before the archive is read",
			Method:          http.MethodPost,
			URL:             "/deploy?slug=www",
			Headers:         zipHeaders,
			Body:            strings.NewReader("not an archive at all"),
			ExpectedStatus:  409,
			ExpectedContent: []string{errBody("Slug is reserved")},
			TestAppFactory:  newTestApp,
			AfterTestFunc:   noNewDeployment,
		},
		{
			Name:            "an archive over --max-body",
			Method:          http.MethodPost,
			URL:             "/deploy",
			Headers:         zipHeaders,
			Body:            bytes.NewReader(bytes.Repeat([]byte{1}, 64<<10+1)),
			ExpectedStatus:  413,
			ExpectedContent: []string{`"error":"Request body too large: the limit is 64 KiB"`},
			TestAppFactory:  newTestApp,
			AfterTestFunc:   noNewDeployment,
		},
		{
			Name:            "too many files in an archive",
			Method:          http.MethodPost,
			URL:             "/deploy",
			Headers:         zipHeaders,
			Body:            zipOf(t, strings.Split(strings.Repeat("f.txt,x,", 11), ",")[:22]...),
			ExpectedStatus:  413,
			ExpectedContent: []string{`"error":"Too many files: the limit is 10"`},
			TestAppFactory:  newTestApp,
			AfterTestFunc:   noNewDeployment,
		},
		{
			Name:            "an absolute path is refused",
			Method:          http.MethodPost,
			URL:             "/deploy",
			Headers:         tarHeaders,
			Body:            tarGzWith(t, tar.Header{Name: "/etc/cron.d/x", Typeflag: tar.TypeReg, Size: 1}),
			ExpectedStatus:  400,
			ExpectedContent: []string{`{"error":"archive entry \"/etc/cron.d/x\" has an absolute path"}`},
			TestAppFactory:  newTestApp,
			AfterTestFunc:   noNewDeployment,
		},
		{
			Name:            "a symbolic link is refused",
			Method:          http.MethodPost,
			URL:             "/deploy",
			Headers:         tarHeaders,
			Body:            tarGzWith(t, tar.Header{Name: "passwd", Typeflag: tar.TypeSymlink, Linkname: "/etc/passwd"}),
			ExpectedStatus:  400,
			ExpectedContent: []string{`not a regular file (links and special files are refused)`},
			TestAppFactory:  newTestApp,
			AfterTestFunc:   noNewDeployment,
		},
		{
			Name:            "a hard link is refused",
			Method:          http.MethodPost,
			URL:             "/deploy",
			Headers:         tarHeaders,
			Body:            tarGzWith(t, tar.Header{Name: "passwd", Typeflag: tar.TypeLink, Linkname: "/etc/passwd"}),
			ExpectedStatus:  400,
			ExpectedContent: []string{`not a regular file`},
			TestAppFactory:  newTestApp,
			AfterTestFunc:   noNewDeployment,
		},
		{
			Name:            "a device file is refused",
			Method:          http.MethodPost,
			URL:             "/deploy",
			Headers:         tarHeaders,
			Body:            tarGzWith(t, tar.Header{Name: "zero", Typeflag: tar.TypeChar, Devmajor: 1, Devminor: 5}),
			ExpectedStatus:  400,
			ExpectedContent: []string{`not a regular file`},
			TestAppFactory:  newTestApp,
			AfterTestFunc:   noNewDeployment,
		},
		{
			Name:            "an invalid is_spa",
			Method:          http.MethodPost,
			URL:             "/deploy?is_spa=maybe",
			Headers:         zipHeaders,
			Body:            zipOf(t, "index.html", "x"),
			ExpectedStatus:  400,
			ExpectedContent: []string{`{"error":"is_spa must be true or false"}`},
			TestAppFactory:  newTestApp,
			AfterTestFunc:   noNewDeployment,
		},
		{
			Name:            "not a zip",
			Method:          http.MethodPost,
			URL:             "/deploy",
			Headers:         zipHeaders,
			Body:            strings.NewReader("plain text"),
			ExpectedStatus:  400,
			ExpectedContent: []string{`"error":"not a valid zip archive`},
			TestAppFactory:  newTestApp,
			AfterTestFunc:   noNewDeployment,
		},
		{
			Name:            "a path the JSON API would refuse",
			Method:          http.MethodPost,
			URL:             "/deploy",
			Headers:         zipHeaders,
			Body:            zipOf(t, "a\x01b.html", "x"),
			ExpectedStatus:  400,
			ExpectedContent: []string{`"error":"invalid file path `},
			TestAppFactory:  newTestApp,
			AfterTestFunc:   noNewDeployment,
		},
	})
}

// tarGzWith is a tar.gz of one entry with the given header (and, for a
// regular file, Size bytes of "x").
func tarGzWith(t testing.TB, h tar.Header) *bytes.Reader {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	h.Mode = 0o644
	if err := tw.WriteHeader(&h); err != nil {
		t.Fatal(err)
	}
	if h.Size > 0 {
		tw.Write(bytes.Repeat([]byte("x"), int(h.Size)))
	}
	tw.Close()
	gz.Close()
	return bytes.NewReader(buf.Bytes())
}
