package hooks

import (
	"encoding/base64"
	"net/http"
	"strings"
	"testing"
	"time"

	"sitedrop/sites/intake"
)

// TestDeployReservesWhatItHolds: a deploy's reservation is what it holds
// (P1.2 of the review). Pages that already have the head's tags reserve
// nothing for them, and a variant dropped for not being smaller (random
// text) is given back: a deploy of many such files fits a budget of a
// few times its size.
func TestDeployReservesWhatItHolds(t *testing.T) {
	app, sd := newFixtureApp(t, func(c *Config) { c.MaxBody, c.MaxFiles = 2<<20, 40 })
	defer app.Cleanup()
	sd.MemoryWait = time.Second
	mux := newMux(t, app)
	free := func() bool { return sd.Memory.InUse() == 0 }

	// 40 pages of 1 KiB with their own title, description and icon, and
	// the deploy's title: nothing is added to them
	var files []string
	for i := range 40 {
		page := `<html><head><title>p</title><meta name=\"description\" content=\"d\"><link rel=\"icon\" href=\"/i.png\"></head><body>` +
			strings.Repeat("page "+string(rune('a'+i%26))+string(rune('a'+i/26))+" ", 128) + `</body></html>`
		files = append(files, `{"path":"p`+string(rune('a'+i%26))+string(rune('a'+i/26))+`.html","content":"`+page+`"}`)
	}
	site := `{"title":"Site","description":"About","favicon":"🙂","files":[` + strings.Join(files, ",") + `]}`
	sd.Memory = intake.NewBudget(1 << 20) // 40 x (the page + 64 KiB) would be 2.6 MiB
	res, body := do(t, mux, http.MethodPost, "/deploy", site, withHeaders(bearer(keyPia), map[string]string{"Content-Type": "application/json"}))
	if res.StatusCode != http.StatusOK {
		t.Fatalf("pages with their head's tags: %d %.300s", res.StatusCode, body)
	}
	waitFor(t, "the budget after the pages", free)

	// 8 files of 128 KiB of random text: every variant is dropped
	var rnd uint64 = 7
	var pairs, entries []string
	for i := range 8 {
		b := make([]byte, 128<<10)
		for j := range b {
			rnd ^= rnd << 13
			rnd ^= rnd >> 7
			rnd ^= rnd << 17
			b[j] = byte(rnd)
		}
		name := "f" + string(rune('a'+i)) + ".txt"
		pairs = append(pairs, name, string(b))
		entries = append(entries, `{"path":"`+name+`","encoding":"base64","content":"`+base64.StdEncoding.EncodeToString(b)+`"}`)
	}
	// the body read and decoded, and the files: their variants, dropped,
	// are given back (they took up to 0.7 MiB more, gzip's as it went)
	sd.Memory = intake.NewBudget(3<<20 + 512<<10)
	res, body = do(t, mux, http.MethodPost, "/deploy", `{"files":[`+strings.Join(entries, ",")+`]}`, withHeaders(bearer(keyPia), map[string]string{"Content-Type": "application/json"}))
	if res.StatusCode != http.StatusOK {
		t.Fatalf("incompressible files: %d %.300s", res.StatusCode, body)
	}
	waitFor(t, "the budget after the files", free)

	// the same as a zip: read whole (in pieces that grow, up to twice its
	// size, then joined), the pieces are given back once joined, and the
	// zip once unpacked
	sd.Memory = intake.NewBudget(3<<20 + 512<<10)
	res, body = do(t, mux, http.MethodPost, "/deploy", string(memZip(t, pairs...)), withHeaders(bearer(keyPia), map[string]string{"Content-Type": "application/zip"}))
	if res.StatusCode != http.StatusOK {
		t.Fatalf("incompressible files in a zip: %d %.300s", res.StatusCode, body)
	}
	waitFor(t, "the budget after the files", free)
}
