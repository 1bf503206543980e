package sites

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// manifests are stored manifests of the usual form and of others.
var manifests = []string{
	`{"a.css":{"hash":"h1","size":12,"type":"text/css; charset=utf-8","encoded":{"br":{"hash":"h2","size":5},"gzip":{"hash":"h3","size":7},"zstd":{"hash":"h4","size":6}}},"index.html":{"hash":"h5","size":0,"type":"text/html","source":"h6"}}`,
	`{}`,
	` { "x" : { "hash" : "h" , "size" : 1 , "type" : "t" , "encoded" : { } } } `,
	`{"caf` + "\u00e9" + `.html":{"hash":"h","size":1,"type":"t"}}`,
	`{"a\u0026b \u003cc\u003e.html":{"hash":"h","size":1,"type":"t"}}`,
	"{\"bad\xff.html\":{\"hash\":\"h\",\"size\":1,\"type\":\"t\"}}",
	`{"a":{"h\u0061sh":"h","size":1}}`,
	`{"a":{"Hash":"h","SIZE":1}}`,
	`{"a":{"hash":"h"},"a":{"hash":"i"}}`,
	`{"a":{"hash":"h","hash":"i"}}`,
	`{"a":{"size":-1}}`,
	`{"a":{"size":1.5}}`,
	`{"a":{"size":1e3}}`,
	`{"a":{"size":01}}`,
	`{"a":{"size":99999999999999999999}}`,
	`{"a":{"size":"1"}}`,
	`{"a":null}`,
	`{"a":{"encoded":null}}`,
	`{"a":{"encoded":{"br":{"hash":"h","size":1,"x":2}}}}`,
	`{"a":{"other":1}}`,
	`{"a":{}} x`,
	`{"a":{},}`,
	`[]`,
	`{"a":{"hash":"h"}`,
}

// TestParseManifestFastAgreesWithEncodingJSON: what the fast parser takes
// it decodes as json.Unmarshal does, and it takes the manifests the
// deploys store.
func TestParseManifestFastAgreesWithEncodingJSON(t *testing.T) {
	for _, raw := range manifests {
		checkManifestFast(t, []byte(raw))
	}
	m := Manifest{}
	for i := range 300 {
		e := ManifestEntry{Hash: fmt.Sprint("h", i), Size: int64(i), Type: "text/html; charset=utf-8", Source: "s"}
		if i%2 == 0 {
			e.Encoded = map[string]EncodedEntry{"br": {Hash: "b", Size: 3}, "gzip": {Hash: "g", Size: 5}}
		}
		m[fmt.Sprintf("p/%d <&>é.html", i)] = e
	}
	raw, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if !checkManifestFast(t, raw) {
		t.Fatal("a manifest as json.Marshal writes it was not taken by the fast parser")
	}
	got, err := ParseManifest(raw)
	if err != nil || !reflect.DeepEqual(got, m) {
		t.Fatalf("ParseManifest: %v", err)
	}
}

// FuzzParseManifestFast: on any manifest the fast parser takes,
// json.Unmarshal succeeds with the same value.
func FuzzParseManifestFast(f *testing.F) {
	for _, raw := range manifests {
		f.Add([]byte(raw))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		checkManifestFast(t, raw)
	})
}

// checkManifestFast parses raw with the fast parser and, when it takes
// raw, with json.Unmarshal, which must agree; it reports whether raw was
// taken.
func checkManifestFast(t *testing.T, raw []byte) bool {
	t.Helper()
	fast, ok := parseManifestFast(raw)
	if !ok {
		if fast != nil {
			t.Errorf("%q: not taken, yet a manifest returned", raw)
		}
		return false
	}
	want := Manifest{}
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Errorf("%q: taken by the fast parser, refused by encoding/json: %v", raw, err)
		return true
	}
	if !reflect.DeepEqual(fast, want) {
		t.Errorf("%q: fast %v, encoding/json %v", raw, fast, want)
	}
	return true
}

func BenchmarkParseManifest1000(b *testing.B) {
	m := Manifest{}
	for i := range 1000 {
		m[fmt.Sprintf("dir%d/file%04d.html", i%10, i)] = ManifestEntry{Hash: strings.Repeat("a", 64), Size: 2048, Type: "text/html; charset=utf-8",
			Encoded: map[string]EncodedEntry{"br": {Hash: strings.Repeat("b", 64), Size: 700}, "gzip": {Hash: strings.Repeat("c", 64), Size: 800}, "zstd": {Hash: strings.Repeat("d", 64), Size: 750}}}
	}
	raw, _ := json.Marshal(m)
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			var m Manifest
			if err := json.Unmarshal(raw, &m); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("ParseManifest", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			if _, err := ParseManifest(raw); err != nil {
				b.Fatal(err)
			}
		}
	})
}
