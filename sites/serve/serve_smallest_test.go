package serve

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"sitedrop/sites"
	"sitedrop/sites/store"
)

// sizedServer serves one file, /f.js, whose identity and variants have the
// given sizes (coding "" is the identity), as a site "demo".
func sizedServer(t *testing.T, sizes map[string]int) (*Server, map[string]string) {
	t.Helper()
	blobStore, err := store.NewFSStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	hashes := map[string]string{}
	entry := sites.ManifestEntry{Type: "text/javascript; charset=utf-8", Encoded: map[string]sites.EncodedEntry{}}
	for coding, n := range sizes {
		data := []byte(coding + ":" + pseudoRandom(n))[:n]
		h := store.HashBytes(data)
		if err := blobStore.Put(context.Background(), h, data); err != nil {
			t.Fatal(err)
		}
		hashes[coding] = h
		if coding == "" {
			entry.Hash, entry.Size = h, int64(n)
		} else {
			entry.Encoded[coding] = sites.EncodedEntry{Hash: h, Size: int64(n)}
		}
	}
	site := sites.Site{Slug: "demo", Status: sites.StatusActive, Files: sites.Manifest{"f.js": entry}}
	return NewServer(func(string) (*sites.Site, error) { cp := site; return &cp, nil }, blobStore), hashes
}

// TestServeSmallestEncoding: the smallest stored representation the
// client accepts is sent, with its own ETag and length.
func TestServeSmallestEncoding(t *testing.T) {
	for _, c := range []struct {
		name   string
		sizes  map[string]int
		accept string
		want   string // coding; "" is the identity
	}{
		{"zstd smallest", map[string]int{"": 1000, "br": 300, "zstd": 280, "gzip": 290}, "gzip, deflate, br, zstd", "zstd"},
		{"gzip smaller than br", map[string]int{"": 1000, "br": 400, "gzip": 350}, "gzip, deflate, br", "gzip"},
		{"smallest not accepted", map[string]int{"": 1000, "br": 300, "zstd": 280, "gzip": 290}, "br, gzip", "gzip"},
		{"q=0 refuses the smallest", map[string]int{"": 1000, "br": 300, "gzip": 290}, "gzip;q=0, br", "br"},
		{"wildcard", map[string]int{"": 1000, "br": 300, "zstd": 280, "gzip": 290}, "*", "zstd"},
		{"wildcard minus the smallest", map[string]int{"": 1000, "br": 300, "zstd": 280, "gzip": 290}, "*, zstd;q=0", "gzip"},
		{"only one accepted", map[string]int{"": 1000, "br": 300, "zstd": 280, "gzip": 290}, "br", "br"},
		{"a tie goes to the preferred coding", map[string]int{"": 1000, "br": 300, "gzip": 300}, "gzip, br", "br"},
		{"no header", map[string]int{"": 1000, "br": 300}, "", ""},
		{"identity asked", map[string]int{"": 1000, "br": 300}, "identity", ""},
		{"identity smallest", map[string]int{"": 100, "gzip": 200}, "gzip", ""},
		{"identity smallest but refused", map[string]int{"": 100, "gzip": 200}, "gzip, identity;q=0", "gzip"},
		{"identity refused by the wildcard", map[string]int{"": 100, "gzip": 200}, "gzip, *;q=0", "gzip"},
		{"nothing acceptable: the identity", map[string]int{"": 1000, "gzip": 200}, "identity;q=0", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv, hashes := sizedServer(t, c.sizes)
			h := map[string]string{}
			if c.accept != "" {
				h["Accept-Encoding"] = c.accept
			}
			res := get(srv, http.MethodGet, "/f.js", h)
			b := body(res)
			if res.StatusCode != 200 || res.Header.Get("Content-Encoding") != c.want {
				t.Fatalf("%d, Content-Encoding %q, want %q", res.StatusCode, res.Header.Get("Content-Encoding"), c.want)
			}
			if res.Header.Get("ETag") != `"`+hashes[c.want]+`"` || len(b) != c.sizes[c.want] ||
				res.Header.Get("Content-Length") != strconv.Itoa(c.sizes[c.want]) {
				t.Fatalf("ETag %q, %d bytes, Content-Length %q: not the %q representation",
					res.Header.Get("ETag"), len(b), res.Header.Get("Content-Length"), c.want)
			}
			if res.Header.Get("Vary") != "Accept-Encoding" {
				t.Fatalf("Vary %q", res.Header.Get("Vary"))
			}
		})
	}
}

// TestPickAllocatesNothing: the choice reads the order prepare computed.
func TestPickAllocatesNothing(t *testing.T) {
	f := prepare(&sites.Site{Files: sites.Manifest{"a.js": {Hash: "i", Size: 100, Encoded: map[string]sites.EncodedEntry{
		"br": {Hash: "b", Size: 40}, "zstd": {Hash: "z", Size: 30}, "gzip": {Hash: "g", Size: 50}}}}}).served["a.js"]
	if got := f.order[:f.n]; string(got) != "\x02\x01\x03\x00" {
		t.Fatalf("order %v, want zstd, br, gzip, identity", got)
	}
	accept := []string{"gzip, deflate, br, zstd"}
	if allocs := testing.AllocsPerRun(100, func() { f.pick(accept) }); allocs != 0 {
		t.Fatalf("pick allocates %v times", allocs)
	}
}

// FuzzAcceptedCodings: any header is read without panic into the four
// representation bits, and a header naming neither "identity" nor "*"
// leaves the identity acceptable.
func FuzzAcceptedCodings(f *testing.F) {
	for _, s := range []string{"", "gzip, br;q=0", "*;q=0", "identity;q=0, *", "zstd ; q = 0.2 ,,", ";;=,"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, header string) {
		got := acceptedCodings([]string{header})
		if got>>(1+len(sites.EncodingPreference)) != 0 {
			t.Fatalf("%q: bits %b out of range", header, got)
		}
		lower := strings.ToLower(header)
		if !strings.Contains(lower, "identity") && !strings.Contains(header, "*") && got&1 == 0 {
			t.Fatalf("%q: the identity refused", header)
		}
	})
}
