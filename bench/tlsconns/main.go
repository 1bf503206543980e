// Command tlsconns measures new TLS connections per second: each of
// -workers loops, for -d, on dial, full TLS handshake, one GET, read the
// whole answer, close. It prints one machine-readable line:
//
//	BENCH conns_per_s=... p50_us=... p99_us=... conns=... errors=... resumed=... version=... curve=...
//
// It is honest about what it measures, which h2load cannot be made to be:
// h2load's reconnects (HTTP/1.1 with Connection: close) resume the TLS
// session, so the server signs nothing. Here every connection is a full
// handshake: no session cache (so no ticket and no PSK is ever offered),
// and the report counts any resumed connection so a reader can check.
// The client offers the key shares of -curves only (X25519 by default:
// what nginx with OpenSSL 3.0 and h2load offer and accept; browsers add
// the hybrid X25519MLKEM768 first, see -curves). It does not verify the
// server's certificate (the work of a browser, not of the server being
// measured) and closes with a reset (SO_LINGER 0) after reading the
// answer, so neither side keeps a TIME_WAIT socket and a run of tens of
// thousands of connections does not run out of loopback ports.
//
// Usage: go run ./bench/tlsconns -addr 127.0.0.1:PORT -host NAME [-path /] [-workers 32] [-d 5s]
package main

import (
	"bufio"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"time"
)

func main() {
	addr := flag.String("addr", "", "server address, host:port (the connection goes there)")
	host := flag.String("host", "", "TLS server name (SNI) and Host header")
	path := flag.String("path", "/", "path asked for")
	workers := flag.Int("workers", 32, "concurrent connections")
	dur := flag.Duration("d", 5*time.Second, "measured duration")
	warmup := flag.Duration("warmup", 0, "unmeasured run before (0: none)")
	curves := flag.String("curves", "x25519", "key shares offered, in order: x25519, x25519mlkem768, p256 (comma-separated)")
	alpn := flag.String("alpn", "http/1.1", "ALPN protocol offered (http/1.1 only: one request per connection)")
	flag.Parse()
	if *addr == "" || *host == "" {
		fmt.Fprintln(os.Stderr, "tlsconns: -addr and -host are needed")
		os.Exit(2)
	}
	cfg, err := clientConfig(*host, *curves, *alpn)
	if err != nil {
		fmt.Fprintln(os.Stderr, "tlsconns:", err)
		os.Exit(2)
	}
	req := fmt.Sprintf("GET %s HTTP/1.1\r\nHost: %s\r\nAccept-Encoding: gzip\r\nUser-Agent: tlsconns\r\n\r\n", *path, *host)
	if *warmup > 0 {
		run(*addr, cfg, req, *workers, *warmup)
	}
	r := run(*addr, cfg, req, *workers, *dur)
	if r.conns == 0 {
		fmt.Fprintf(os.Stderr, "tlsconns: no connection succeeded (%d errors; last: %v)\n", r.errors, r.lastErr)
		os.Exit(1)
	}
	slices.Sort(r.lat)
	pct := func(p float64) int64 { return r.lat[min(len(r.lat)-1, int(float64(len(r.lat))*p))].Microseconds() }
	fmt.Printf("BENCH conns_per_s=%.2f p50_us=%d p99_us=%d conns=%d errors=%d resumed=%d version=%s curve=%s\n",
		float64(r.conns)/r.elapsed.Seconds(), pct(0.50), pct(0.99), r.conns, r.errors, r.resumed,
		strings.ReplaceAll(tls.VersionName(r.version), " ", ""), r.curve)
	if r.errors > 0 {
		fmt.Fprintf(os.Stderr, "tlsconns: %d errors; last: %v\n", r.errors, r.lastErr)
	}
}

// clientConfig is a TLS 1.3 client for host that never resumes a session
// and offers the named key shares only.
func clientConfig(host, curves, alpn string) (*tls.Config, error) {
	ids := map[string]tls.CurveID{"x25519": tls.X25519, "x25519mlkem768": tls.X25519MLKEM768, "p256": tls.CurveP256}
	var prefs []tls.CurveID
	for _, c := range strings.Split(curves, ",") {
		id, ok := ids[strings.ToLower(strings.TrimSpace(c))]
		if !ok {
			return nil, fmt.Errorf("unknown curve %q", c)
		}
		prefs = append(prefs, id)
	}
	if alpn != "http/1.1" {
		return nil, errors.New("-alpn: only http/1.1 (one request per connection, read to its end)")
	}
	return &tls.Config{
		ServerName:         host,
		InsecureSkipVerify: true, // see the package comment
		MinVersion:         tls.VersionTLS13,
		CurvePreferences:   prefs,
		NextProtos:         []string{alpn},
		ClientSessionCache: nil, // no resumption: every handshake is a full one
	}, nil
}

// result is one run's tally.
type result struct {
	conns, errors, resumed int
	lat                    []time.Duration
	elapsed                time.Duration
	version                uint16
	curve                  tls.CurveID
	lastErr                error
}

// run loops workers on one connection each until d has passed.
func run(addr string, cfg *tls.Config, req string, workers int, d time.Duration) result {
	var mu sync.Mutex
	var total result
	start := time.Now()
	deadline := start.Add(d)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine result
			for time.Now().Before(deadline) {
				t0 := time.Now()
				st, err := once(addr, cfg, req)
				if err != nil {
					mine.errors++
					mine.lastErr = err
					continue
				}
				mine.lat = append(mine.lat, time.Since(t0))
				mine.conns++
				if st.DidResume {
					mine.resumed++
				}
				mine.version, mine.curve = st.Version, st.CurveID
			}
			mu.Lock()
			defer mu.Unlock()
			total.conns += mine.conns
			total.errors += mine.errors
			total.resumed += mine.resumed
			total.lat = append(total.lat, mine.lat...)
			if mine.conns > 0 {
				total.version, total.curve = mine.version, mine.curve
			}
			if mine.lastErr != nil {
				total.lastErr = mine.lastErr
			}
		}()
	}
	wg.Wait()
	total.elapsed = time.Since(start)
	return total
}

// once makes one connection: handshake, the request, the whole answer
// (which must be a 200), then a reset.
func once(addr string, cfg *tls.Config, req string) (tls.ConnectionState, error) {
	raw, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return tls.ConnectionState{}, err
	}
	defer func() {
		raw.(*net.TCPConn).SetLinger(0)
		raw.Close()
	}()
	raw.SetDeadline(time.Now().Add(10 * time.Second))
	c := tls.Client(raw, cfg)
	if err := c.Handshake(); err != nil {
		return tls.ConnectionState{}, fmt.Errorf("handshake: %w", err)
	}
	if _, err := io.WriteString(c, req); err != nil {
		return tls.ConnectionState{}, err
	}
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return tls.ConnectionState{}, err
	}
	_, err = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if err != nil {
		return tls.ConnectionState{}, err
	}
	if res.StatusCode != http.StatusOK {
		return tls.ConnectionState{}, fmt.Errorf("status %d", res.StatusCode)
	}
	return c.ConnectionState(), nil
}
