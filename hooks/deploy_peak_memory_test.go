//go:build !race

// The race detector's own memory counts in VmHWM: this test runs without
// it (CI: go test -count=1 -run '^TestArchiveDeployPeakMemory$' ./hooks/).

package hooks

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"testing"

	"sitedrop/sites"
	"sitedrop/sites/intake"
)

// memChildEnv marks the subprocess that TestArchiveDeployPeakMemory runs
// itself in, so that its peak memory (VmHWM) is its own.
const memChildEnv = "SITEDROP_DEPLOY_MEMORY_CHILD"

// TestArchiveDeployPeakMemory deploys hostile archives, several at once,
// and measures the peak resident memory they cost (VmHWM, reset before):
// anonymous archives whose declared sizes are over the anonymous cap must
// be refused before they are inflated, and keyed archives as large as the
// limits allow must stay within --deploy-memory, however they are built.
// It runs in a subprocess, whose memory is only this test's.
func TestArchiveDeployPeakMemory(t *testing.T) {
	if os.Getenv(memChildEnv) == "" {
		if testing.Short() {
			t.Skip("measures memory in a subprocess")
		}
		cmd := exec.Command(os.Args[0], "-test.run=^TestArchiveDeployPeakMemory$", "-test.count=1", "-test.v")
		cmd.Env = append(os.Environ(), memChildEnv+"=1")
		out, err := cmd.CombinedOutput()
		t.Logf("subprocess:\n%s", out)
		if err != nil {
			t.Fatalf("subprocess: %v", err)
		}
		return
	}
	const (
		maxBody      = 4 << 20
		deployMemory = 64 << 20
		anonCap      = 1 << 20
	)
	app, _ := newBareApp(t, func(c *Config) {
		c.MaxBody = maxBody
		c.DeployMemory = deployMemory
		c.AnonStoragePerIP = anonCap
		c.AnonDeploysPerHour = -1
		c.DeploysPerMinute = 1000
	})
	defer app.Cleanup()
	mustUser(t, app, "pia@example.com", sites.PlanPro, keyPia)
	mux := newMux(t, app)

	unpacked := intake.ArchiveUnpackFactor * maxBody // what the general limit lets an archive hold
	zeros := strings.Repeat("\x00", unpacked-4096)
	noise := make([]byte, maxBody*3/4) // incompressible: the body itself is large
	var rnd uint64 = 1
	for i := range noise { // xorshift: bytes gzip cannot shrink
		rnd ^= rnd << 13
		rnd ^= rnd >> 7
		rnd ^= rnd << 17
		noise[i] = byte(rnd)
	}
	archives := map[string][]byte{
		"zip of zeros":      memZip(t, "site/index.html", zeros),
		"zip of two":        memZip(t, "a.bin", zeros[:unpacked/2], "b.bin", zeros[:unpacked/2-8192]),
		"tar.gz of zeros":   memTarGz(t, "site/index.html", zeros),
		"zip of noise":      memZip(t, "noise.bin", string(noise), "index.html", zeros[:unpacked-len(noise)-8192]),
		"tar.gz of noise":   memTarGz(t, "noise.bin", string(noise), "index.html", zeros[:unpacked-len(noise)-8192]),
		"tar.gz of two big": memTarGz(t, "a.css", zeros[:unpacked/2], "b.js", zeros[:unpacked/2-8192]),
	}

	deploy := func(body []byte, format string, key string) (int, string) {
		ct := "application/zip"
		if format == "tar.gz" {
			ct = "application/gzip"
		}
		req := httptest.NewRequest(http.MethodPost, "/deploy", bytes.NewReader(body))
		req.Header.Set("Content-Type", ct)
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, req)
		return rec.Code, rec.Body.String()
	}
	formatOf := func(name string) string {
		if strings.HasPrefix(name, "tar.gz") {
			return "tar.gz"
		}
		return "zip"
	}

	// warm up: the code and the database pages a deploy touches, and the
	// compressors' pooled state (a fixed cost, not a deploy's)
	for _, name := range []string{"tar.gz of two big", "zip of noise"} {
		if code, body := deploy(archives[name], formatOf(name), keyPia); code != http.StatusOK {
			t.Fatalf("warm-up deploy: %d %s", code, body)
		}
	}
	zeros, noise = "", nil

	measure := func(name string, run func()) int64 {
		runtime.GC()
		debug.FreeOSMemory()
		resetPeakMemory(t)
		base := procStatusKB(t, "VmRSS")
		run()
		peak := procStatusKB(t, "VmHWM")
		delta := (peak - base) << 10
		t.Logf("%s: peak %s over %s resident (--deploy-memory %s)", name,
			sites.FormatBytes(delta), sites.FormatBytes(base<<10), sites.FormatBytes(deployMemory))
		return delta
	}

	// anonymous archives over the anonymous cap: refused at their
	// declared sizes, before anything is inflated
	anon := measure("anonymous archives over the cap", func() {
		var wg sync.WaitGroup
		for name, body := range archives {
			for range 2 {
				wg.Go(func() {
					code, answer := deploy(body, formatOf(name), "")
					if code != http.StatusRequestEntityTooLarge || !strings.Contains(answer, "anonymous") {
						t.Errorf("anonymous %s: %d %s, want 413 naming the anonymous limit", name, code, answer)
					}
				})
			}
		}
		wg.Wait()
	})
	if anon > deployMemory/2 {
		t.Errorf("anonymous archives over the cap cost %s of memory: they are inflated before they are refused", sites.FormatBytes(anon))
	}

	keyed := measure("keyed archives at the limits", func() {
		var wg sync.WaitGroup
		for name, body := range archives {
			for range 2 {
				wg.Go(func() {
					code, answer := deploy(body, formatOf(name), keyPia)
					if code != http.StatusOK && code != http.StatusServiceUnavailable {
						t.Errorf("keyed %s: %d %s", name, code, answer)
					}
				})
			}
		}
		wg.Wait()
	})
	// what no deploy reserves: the requests' own state (readers, the
	// decompressors' windows, the database), the runtime's
	const unreserved = 16 << 20
	if keyed > deployMemory+unreserved {
		t.Errorf("keyed archives took %s of memory at their peak, over --deploy-memory %s and the %s no deploy reserves", sites.FormatBytes(keyed), sites.FormatBytes(deployMemory), sites.FormatBytes(unreserved))
	}
}
