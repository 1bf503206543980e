package hooks

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"sitedrop/sites"
)

// countingS3 is a fake S3 server, enough for the blob store: it keeps the
// objects PUT to it, answers HEAD and GET from them, lists nothing, and
// counts the HEAD requests for blobs.
type countingS3 struct {
	mu      sync.Mutex
	objects map[string][]byte
	heads   atomic.Int64
}

func (f *countingS3) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	key := r.URL.Path
	switch {
	case r.Method == http.MethodPut:
		b, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		f.objects[key] = b
		f.mu.Unlock()
		w.Header().Set("ETag", `"etag"`)
	case r.URL.Query().Get("list-type") == "2":
		w.Header().Set("Content-Type", "application/xml")
		fmt.Fprint(w, `<?xml version="1.0" encoding="UTF-8"?><ListBucketResult><IsTruncated>false</IsTruncated><KeyCount>0</KeyCount></ListBucketResult>`)
	case strings.Count(strings.Trim(key, "/"), "/") == 0: // the bucket
	default:
		if r.Method == http.MethodHead && strings.Contains(key, "/blobs/") {
			f.heads.Add(1)
		}
		f.mu.Lock()
		b, ok := f.objects[key]
		f.mu.Unlock()
		if !ok {
			w.Header().Set("Content-Type", "application/xml")
			w.WriteHeader(http.StatusNotFound)
			if r.Method != http.MethodHead {
				fmt.Fprint(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>NoSuchKey</Code><Message>no such key</Message></Error>`)
			}
			return
		}
		w.Header().Set("ETag", `"etag"`)
		w.Header().Set("Content-Length", fmt.Sprint(len(b)))
		if r.Method == http.MethodGet {
			w.Write(b)
		}
	}
}

// TestBlobsMissingS3Requests: on an S3 store, POST /blobs/missing with
// thousands of hashes sends a bounded number of requests to the bucket
// (not one per hash), answers present the content it stored, and
// missing the content it lacks.
func TestBlobsMissingS3Requests(t *testing.T) {
	fake := &countingS3{objects: map[string][]byte{}}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test-secret")
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_CONFIG_FILE", os.DevNull)
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", os.DevNull)
	app, sd := newBareApp(t, func(c *Config) {
		c.Store = "s3://bkt/content?endpoint=" + srv.URL
		c.MaxFiles = 5000
	})
	defer app.Cleanup()
	if sd.s3 == nil {
		t.Fatal("--store s3:// did not open the S3 store")
	}
	mustUser(t, app, "alice@example.com", sites.PlanFree, keyAlice)
	mux := newMux(t, app)

	page := "<!doctype html><p>stored on S3</p>"
	res, body := do(t, mux, http.MethodPost, "/deploy", `{"files":[{"path":"index.html","content":"`+page+`"}]}`,
		withHeaders(bearer(keyAlice), map[string]string{"Content-Type": "application/json"}))
	if res.StatusCode != http.StatusOK {
		t.Fatalf("deploy: %d %s", res.StatusCode, body)
	}
	sum := sha256.Sum256([]byte(page))
	stored := hex.EncodeToString(sum[:])

	hashes := []string{stored}
	for i := range 4999 {
		s := sha256.Sum256([]byte(fmt.Sprint("absent ", i)))
		hashes = append(hashes, hex.EncodeToString(s[:]))
	}
	q, _ := json.Marshal(map[string]any{"hashes": hashes})
	fake.heads.Store(0)
	res, body = do(t, mux, http.MethodPost, "/blobs/missing", string(q), withHeaders(bearer(keyAlice), map[string]string{"Content-Type": "application/json"}))
	if res.StatusCode != http.StatusOK {
		t.Fatalf("/blobs/missing: %d %s", res.StatusCode, body)
	}
	var out struct{ Missing []string }
	if err := json.Unmarshal([]byte(body), &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Missing) != 4999 || out.Missing[0] != hashes[1] || out.Missing[4998] != hashes[4999] {
		t.Fatalf("missing: %d hashes (first %v), want the 4999 absent ones in order", len(out.Missing), out.Missing[:min(2, len(out.Missing))])
	}
	if n := fake.heads.Load(); n > sites.MaxStoreLookups {
		t.Fatalf("one /blobs/missing of %d hashes sent %d requests to the bucket, want at most %d", len(hashes), n, sites.MaxStoreLookups)
	}
	t.Logf("%d hashes: %d requests to the bucket", len(hashes), fake.heads.Load())
}
