package ship

import (
	"encoding/json"
	"testing"

	"sitedrop/sites/analytics"
)

// FuzzParseDelta: a delta ParseDelta accepts holds to its bounds, and
// reads back the same once written again.
func FuzzParseDelta(f *testing.F) {
	f.Add([]byte(`{"replica":"r","seq":1,"days":[{"site":"s","date":"2026-03-04","page_views":2,"pages":[{"key":"/","count":2}],"level":1,"visitor_hashes":[1,18446744073709551615]}]}`))
	f.Add([]byte(`{"days":[]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := ParseDelta(data)
		if err != nil {
			return
		}
		if len(d.Days) > MaxDays {
			t.Fatalf("%d days", len(d.Days))
		}
		for _, day := range d.Days {
			a := day.Analytics()
			if a.Site == "" || a.PageViews < 0 || len(day.Hashes) > analytics.MaxVisitorHashes {
				t.Fatalf("out of bounds: %+v", day)
			}
		}
		again, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		d2, err := ParseDelta(again)
		if err != nil {
			t.Fatalf("a written delta refused: %v", err)
		}
		if b, _ := json.Marshal(d2); string(b) != string(again) {
			t.Fatalf("not read back alike:\n%s\n%s", again, b)
		}
	})
}
