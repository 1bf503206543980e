package main

import (
	"archive/zip"
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// cliVsZip times a first deploy of a generated site of o.cliFiles files
// (bench/genfiles -site: HTML, CSS, JavaScript and images of 1–30 KB)
// with the sitedrop CLI (hash, POST /deploy, POST /blobs/missing, PUT of
// every content, POST /deploy again) against one zip upload of the same
// folder by curl. Each is sent to a server of its own, started with a
// fresh data directory, so that both are first deploys; each of the
// o.cliReps reps deploys a new site (a new seed), which both get, in
// alternating order, after an untimed warm-up rep. The sites and their
// zips are all made before anything is timed (the zip as a user would
// have it), and removed only at the end: files deleted just before a
// deploy slow the creation of its blobs on some file systems (ext4
// without a journal skips recently freed inodes one by one). The issue's
// target: the CLI takes at most 1.5× the zip.
func cliVsZip(o *options, root string, add func(what, value, target string)) error {
	if _, err := exec.LookPath("curl"); err != nil {
		return fmt.Errorf("curl not found: install it (apt-get install curl)")
	}
	genfiles := filepath.Join(root, "genfiles")
	build := exec.Command("go", "build", "-o", genfiles, "./bench/genfiles")
	build.Dir, build.Stdout, build.Stderr = moduleRoot(), os.Stderr, os.Stderr
	build.Env = append(os.Environ(), "GOTOOLCHAIN=local")
	if err := build.Run(); err != nil {
		return fmt.Errorf("build genfiles: %v", err)
	}
	slots := o.cliReps + 5
	var srvs []*server
	for _, name := range []string{"cli", "zip"} {
		s, err := newServer(name, o.bin, root, o.serverCPU)
		if err != nil {
			return err
		}
		if _, err := s.start(slots); err != nil {
			return err
		}
		if err := s.waitReady(); err != nil {
			return err
		}
		srvs = append(srvs, s)
	}
	cliSrv, zipSrv := srvs[0], srvs[1]
	defer cliSrv.stop()
	defer zipSrv.stop()
	// the CLI must not find a saved login of the machine's
	home := filepath.Join(root, "cli-home")
	if err := os.MkdirAll(home, 0o700); err != nil {
		return err
	}

	var siteBytes, zipBytes int64
	logf("generating %d sites of %d files and their zips", o.cliReps+1, o.cliFiles)
	for i := 0; i <= o.cliReps; i++ {
		dir := filepath.Join(root, fmt.Sprintf("site-%d", i))
		gen := exec.Command(genfiles, "-site", fmt.Sprint(o.cliFiles), "-seed", fmt.Sprint(i+1), dir)
		gen.Stderr = os.Stderr
		out, err := gen.Output()
		if err != nil {
			return fmt.Errorf("genfiles: %v", err)
		}
		fmt.Sscanf(string(out), "%d files, %d bytes", new(int), &siteBytes)
		if zipBytes, err = zipFolder(dir, dir+".zip"); err != nil {
			return err
		}
	}
	if err := exec.Command("sync").Run(); err != nil {
		return fmt.Errorf("sync: %v", err)
	}

	var cliTimes, zipTimes []time.Duration
	var ratios []string
	for i := 0; i <= o.cliReps; i++ { // i == 0: untimed warm-up
		dir := filepath.Join(root, fmt.Sprintf("site-%d", i))
		zipPath := dir + ".zip"
		slug := letters(i)
		var err error
		runCLI := func() (time.Duration, error) {
			c := exec.Command(o.bin, "deploy", "--server", cliSrv.base(), "--key", cliSrv.key, "--slug", "cli-"+slug, dir)
			c.Env = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+home, "SITEDROP_KEY=", "SITEDROP_SERVER=")
			var errOut bytes.Buffer
			c.Stderr = &errOut
			t0 := time.Now()
			out, err := c.Output()
			d := time.Since(t0)
			if err != nil || !strings.Contains(string(out), "cli-"+slug) {
				return d, fmt.Errorf("sitedrop deploy: %v: %s %s", err, out, lastLines(errOut.String(), 5))
			}
			return d, nil
		}
		runCurl := func() (time.Duration, error) {
			c := exec.Command("curl", "-sS", "-o", os.DevNull, "-w", "%{http_code}",
				"-X", "POST", zipSrv.base()+"/deploy?slug=zip-"+slug,
				"-H", "Authorization: Bearer "+zipSrv.key, "-H", "Content-Type: application/zip",
				"--data-binary", "@"+zipPath)
			t0 := time.Now()
			out, err := c.Output()
			d := time.Since(t0)
			if err != nil || string(out) != "200" {
				return d, fmt.Errorf("curl zip deploy: %v: HTTP %s", err, out)
			}
			return d, nil
		}
		var dc, dz time.Duration
		if i%2 == 0 {
			if dz, err = runCurl(); err == nil {
				dc, err = runCLI()
			}
		} else {
			if dc, err = runCLI(); err == nil {
				dz, err = runCurl()
			}
		}
		if err != nil {
			return err
		}
		if i == 0 {
			logf("warm-up: CLI %s, curl zip %s", ms(dc), ms(dz))
			continue
		}
		logf("rep %d: CLI %s, curl zip %s (%.2f×)", i, ms(dc), ms(dz), dc.Seconds()/dz.Seconds())
		cliTimes, zipTimes = append(cliTimes, dc), append(zipTimes, dz)
		ratios = append(ratios, fmt.Sprintf("%.2f", dc.Seconds()/dz.Seconds()))
	}
	mc, mz := medianD(cliTimes), medianD(zipTimes)
	ratio := mc.Seconds() / mz.Seconds()
	add(fmt.Sprintf("first deploy of %d files (%.1f MB) with the CLI (`sitedrop deploy`, a key): median of %d", o.cliFiles, float64(siteBytes)/1e6, o.cliReps), ms(mc), "")
	add(fmt.Sprintf("the same folder as one zip (%.1f MB) by curl: median of %d", float64(zipBytes)/1e6, o.cliReps), ms(mz), "")
	add("CLI / curl zip (median / median; per rep: "+strings.Join(ratios, ", ")+")", fmt.Sprintf("%.2f×", ratio), "≤ 1.5× "+check(ratio <= 1.5))
	return nil
}

// zipFolder writes the files of dir into a zip (deflated) at dst and
// returns its size.
func zipFolder(dir, dst string) (int64, error) {
	f, err := os.Create(dst)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	zw := zip.NewWriter(f)
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		w, err := zw.Create(filepath.ToSlash(rel))
		if err != nil {
			return err
		}
		src, err := os.Open(p)
		if err != nil {
			return err
		}
		defer src.Close()
		_, err = io.Copy(w, src)
		return err
	})
	if err != nil {
		return 0, err
	}
	if err := zw.Close(); err != nil {
		return 0, err
	}
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	return st.Size(), nil
}

// lastLines is the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
