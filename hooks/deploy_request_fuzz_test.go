package hooks

import (
	"bufio"
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode"

	"github.com/pocketbase/pocketbase/core"

	"sitedrop/sites"
	"sitedrop/sites/intake"
	"sitedrop/sites/store"
)

// FuzzDeployRequest feeds raw bodies through the JSON deploy decoding and
// validation (intake.ArchiveSentAsJSON, intake.DecodeJSON, the slug rule, content) without
// an app, so each run is cheap. It never panics; every refusal is a client
// error (4xx, as toAPIError maps it, never a 500); an accepted request has
// one to maxFiles files with clean, distinct paths and metadata without
// control characters.
func FuzzDeployRequest(f *testing.F) {
	const limit, maxFiles = 1 << 16, 8
	stored := []byte("stored bytes")
	storedHash := store.HashBytes(stored)
	load := func(h string) ([]byte, error) {
		if h == storedHash {
			return stored, nil
		}
		return nil, fmt.Errorf("load %s: %w", h, store.ErrBlobNotFound)
	}
	for _, s := range []string{
		`{"html":"<h1>hi</h1>","slug":"fresh-page","title":"Hi","description":"d","favicon":"👋","is_spa":true}`,
		`{"files":[{"path":"/index.html","content":"x"},{"path":"./a/b.css","content":"","contentType":"text/css"}]}`,
		`{"files":[{"path":"img/a.png","content":"iVBORw0K","encoding":"base64"}]}`,
		`{"files":[{"path":"a.txt","sha256":"` + storedHash + `"},{"path":"b.txt","sha256":"` + strings.Repeat("0", 64) + `"}]}`,
		`{"files":[{"path":"about.html"}]}`,
		`{"files":[{"path":"a","content":null}]}`,
		`{"files":[{"path":"a","content":"x","sha256":"zz"}]}`,
		`{"files":[{"path":"../x","content":"x"},{"path":"a//b","content":"x"},{"path":"a\\b","content":"x"},{"path":"a\u0000b","content":"x"}]}`,
		`{"files":[{"path":"a","content":"x"},{"path":"/a","content":"y"}]}`,
		`{"files":[{"path":"a","content":"x","contentType":"text/html; charset"}]}`,
		`{"files":[{"path":"a","content":"x","encoding":"hex"}]}`,
		`{"files":[{"path":"a","content":1}]}`,
		`{"files":[]}`, `{"files":{}}`, `{"html":""}`, `{"html":"x","files":[]}`, `{}`, `[]`, `null`, ``, `{"html":"x"} {}`,
		`{"html":"x","title":"\u001b[2J"}`, `{"html":"x","description":"a\u202eb"}`, `{"html":"x","favicon":"<"}`,
		`{"html":"x","slug":"Bad Slug"}`, `{"html":"x","slug":""}`, `{"html":"x","is_spa":"yes"}`,
		`{"html":"x","title":"` + strings.Repeat("t", intake.MaxTitleLen+1) + `"}`,
		`{"files":[` + strings.Repeat(`{"path":"x","content":"x"},`, maxFiles) + `{"path":"y","content":"y"}]}`,
		`{"html":"x","password":"eight chars","protect":true}`, `{"html":"x","password":null,"protect":null}`,
		`{"html":"x","password":"short"}`, `{"html":"x","password":1}`, `{"html":"x","protect":"rotate"}`, `{"html":"x","protect":"yes"}`,
		`{"html":"x","protect":{}}`, `{"html":"x","password":"\xff\xfe\xfd\xfc\xfb\xfa\xf9\xf8"}`,
		"PK\x03\x04rest", "\x1f\x8b\x08", `{"html":"` + strings.Repeat("x", limit) + `"}`, `{"html":"x\xff"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		e := &core.RequestEvent{}
		e.Request = httptest.NewRequest(http.MethodPost, "/deploy", bytes.NewReader(body))
		e.Response = httptest.NewRecorder()
		req := &intake.Request{}
		// as intake.Deploys.Read reads a body (the rate guard aside)
		br := bufio.NewReaderSize(http.MaxBytesReader(e.Response, e.Request.Body, limit), 64)
		err := intake.ArchiveSentAsJSON(br)
		if err == nil {
			err = intake.DecodeJSON(br, limit, &req.DeployRequest)
		}
		if err == nil && req.Slug != nil {
			err = sites.ValidateSlug(*req.Slug)
		}
		var meta sites.Metadata
		var up sites.Upload
		if err == nil {
			meta, up, err = req.Content(maxFiles, load)
		}
		if err != nil {
			ae, known := toAPIError(err)
			if !known || ae.Status < 400 || ae.Status >= 500 || ae.Message == "" {
				t.Fatalf("body %q: error %T %v answers %d %q, want a 4xx", body, err, err, ae.Status, ae.Message)
			}
			return
		}
		if len(up.Files) == 0 || len(up.Files) > maxFiles {
			t.Fatalf("body %q: accepted with %d files", body, len(up.Files))
		}
		seen := map[string]bool{}
		for _, fl := range up.Files {
			if p, err := sites.NormalizePath(fl.Path); err != nil || p != fl.Path || seen[p] {
				t.Fatalf("body %q: accepted the file path %q (%v, duplicate %v)", body, fl.Path, err, seen[p])
			}
			seen[fl.Path] = true
			if fl.Data == nil || fl.ContentType == "" {
				t.Fatalf("body %q: file %q has no data (%v) or content type %q", body, fl.Path, fl.Data == nil, fl.ContentType)
			}
		}
		for _, v := range []*string{meta.Title, meta.Description, meta.Favicon} {
			if v == nil {
				continue
			}
			for _, r := range *v {
				if unicode.IsControl(r) || intake.IsBidiOverride(r) {
					t.Fatalf("body %q: accepted metadata %q with %U", body, *v, r)
				}
			}
		}
	})
}
