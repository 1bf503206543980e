package publish

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// long is a wait no test should reach: a wait that returns has been
// answered by what the test did, not by its timeout.
const long = time.Minute

// TestChangesWait: a long poll returns the feed's position as soon as it
// differs from the replica's, at once when it already does; the same
// position at its timeout; ctx's error when the replica goes away; and
// nothing while the position is unknown.
func TestChangesWait(t *testing.T) {
	p1 := Position{Epoch: "e1", Seq: 1}
	p2 := Position{Epoch: "e1", Seq: 2}
	tests := []struct {
		name    string
		at      Position // the position before the wait; zero: unknown
		after   Position
		timeout time.Duration
		set     Position      // Set while waiting (zero: none)
		cancel  bool          // cancel the wait's ctx while waiting
		want    Position      //
		wantErr error         //
		within  time.Duration // the wait must not reach its timeout
	}{
		{name: "already elsewhere", at: p2, after: p1, timeout: long, want: p2},
		{name: "another epoch", at: Position{Epoch: "e2", Seq: 1}, after: p1, timeout: long, want: Position{Epoch: "e2", Seq: 1}},
		{name: "first ask", at: p1, after: Position{}, timeout: long, want: p1},
		{name: "moves while waiting", at: p1, after: p1, timeout: long, set: p2, want: p2},
		{name: "timeout", at: p1, after: p1, timeout: 20 * time.Millisecond, want: p1},
		{name: "unknown until the timeout", after: Position{}, timeout: 20 * time.Millisecond, want: Position{}},
		{name: "unknown, then known", after: Position{}, timeout: long, set: p1, want: p1},
		{name: "cancelled", at: p1, after: p1, timeout: long, cancel: true, wantErr: context.Canceled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := NewChanges(ChangesConfig{})
			if tt.at != (Position{}) {
				c.Set(tt.at)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			type result struct {
				p   Position
				err error
			}
			done := make(chan result, 1)
			go func() {
				p, err := c.Wait(ctx, tt.after, tt.timeout)
				done <- result{p, err}
			}()
			if tt.set != (Position{}) || tt.cancel {
				waitFor(t, func() bool { return c.waiters() == 1 })
				if tt.cancel {
					cancel()
				} else {
					c.Set(tt.set)
				}
			}
			select {
			case r := <-done:
				if !errors.Is(r.err, tt.wantErr) || r.p != tt.want {
					t.Fatalf("Wait: %v, %v; want %v, %v", r.p, r.err, tt.want, tt.wantErr)
				}
			case <-time.After(long / 2):
				t.Fatal("Wait did not return")
			}
			if n := c.waiters(); n != 0 {
				t.Fatalf("%d waiters left", n)
			}
		})
	}
}

// TestChangesCapAndClose: past MaxWaiters a wait is refused (ErrBusy)
// and there is room again once one returns; Close ends every wait and
// refuses new ones (ErrClosed), so the drain is not held up.
func TestChangesCapAndClose(t *testing.T) {
	c := NewChanges(ChangesConfig{MaxWaiters: 2})
	p1 := Position{Epoch: "e", Seq: 1}
	c.Set(p1)
	ctx1, cancel1 := context.WithCancel(context.Background())
	ctx2, cancel2 := context.WithCancel(context.Background())
	defer cancel2()
	errs := make(chan error, 2)
	for _, ctx := range []context.Context{ctx1, ctx2} {
		go func() {
			_, err := c.Wait(ctx, p1, long)
			errs <- err
		}()
	}
	waitFor(t, func() bool { return c.waiters() == 2 })
	if _, err := c.Wait(context.Background(), p1, long); !errors.Is(err, ErrBusy) {
		t.Fatalf("a third wait: %v, want ErrBusy", err)
	}
	// one leaves: room for one
	cancel1()
	if err := <-errs; !errors.Is(err, context.Canceled) {
		t.Fatalf("a cancelled wait: %v", err)
	}
	waitFor(t, func() bool { return c.waiters() == 1 })
	go func() {
		_, err := c.Wait(context.Background(), p1, long)
		errs <- err
	}()
	waitFor(t, func() bool { return c.waiters() == 2 })

	c.Close()
	for range 2 {
		if err := <-errs; !errors.Is(err, ErrClosed) {
			t.Fatalf("a wait at Close: %v, want ErrClosed", err)
		}
	}
	if _, err := c.Wait(context.Background(), Position{}, long); !errors.Is(err, ErrClosed) {
		t.Fatalf("a wait after Close: %v, want ErrClosed", err)
	}
	c.Set(Position{Epoch: "e", Seq: 2}) // the publisher may still write the feed
	c.Close()                           // twice: no panic
}

// TestPublisherTellsChanges: every write of the feed moves the position
// a long poll waits on to the feed's own epoch and seq.
func TestPublisherTellsChanges(t *testing.T) {
	ctx := context.Background()
	objs := newMem()
	s := &fakeSites{versions: map[string]string{"a": "v1"}}
	p := newTestPublisher(objs, s, 0)
	c := NewChanges(ChangesConfig{Objects: objs})
	p.cfg.Changes = c
	if err := p.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	f := objs.feed(t)
	if got := c.Position(); got != (Position{Epoch: f.Epoch, Seq: f.Seq}) || got.Seq == 0 {
		t.Fatalf("after the first write: %v, want the feed's %s:%d", got, f.Epoch, f.Seq)
	}
	at := c.Position()
	moved := make(chan Position, 1)
	go func() {
		p, _ := c.Wait(ctx, at, long)
		moved <- p
	}()
	waitFor(t, func() bool { return c.waiters() == 1 })
	s.set("a", "v2")
	p.Mark("a")
	if err := p.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	f = objs.feed(t)
	if got := <-moved; got != (Position{Epoch: f.Epoch, Seq: f.Seq}) || got.Seq <= at.Seq {
		t.Fatalf("a waiting long poll got %v, want the feed's %s:%d", got, f.Epoch, f.Seq)
	}
}

// TestChangesHandler: the route refuses a request without the replica
// token (which the primary writes to the store on first use) or with
// another one, refuses a malformed position, answers the position, and
// 503 past the cap.
func TestChangesHandler(t *testing.T) {
	objs := newMem()
	c := NewChanges(ChangesConfig{Objects: objs, MaxWaiters: 1, Timeout: long})
	c.Set(Position{Epoch: "abc", Seq: 7})
	srv := httptest.NewServer(c)
	defer srv.Close()
	get := func(auth, after string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, srv.URL+ChangesPath+"?after="+after, nil)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var body strings.Builder
		buf := make([]byte, 512)
		for {
			n, err := resp.Body.Read(buf)
			body.Write(buf[:n])
			if err != nil {
				break
			}
		}
		return resp.StatusCode, body.String()
	}
	if code, body := get("", ""); code != http.StatusUnauthorized || !strings.Contains(body, `"error":"Unauthorized"`) {
		t.Fatalf("no token: %d %s", code, body)
	}
	tok, err := ReadToken(context.Background(), objs)
	if err != nil || len(tok) != 64 {
		t.Fatalf("the token in the store: %q, %v", tok, err)
	}
	if code, _ := get("Bearer "+strings.Repeat("0", 64), ""); code != http.StatusUnauthorized {
		t.Fatalf("another token: %d", code)
	}
	if code, _ := get("Basic "+tok, ""); code != http.StatusUnauthorized {
		t.Fatalf("not a Bearer: %d", code)
	}
	for _, bad := range []string{"abc", "abc:x", "abc:-1", ":3", "a%20b:1"} {
		if code, body := get("Bearer "+tok, bad); code != http.StatusBadRequest || !strings.Contains(body, `"error":`) {
			t.Fatalf("after=%s: %d %s", bad, code, body)
		}
	}
	code, body := get("Bearer "+tok, "abc:6")
	var a ChangesAnswer
	if code != http.StatusOK || json.Unmarshal([]byte(body), &a) != nil || a.Position != "abc:7" {
		t.Fatalf("an answer: %d %s, want abc:7", code, body)
	}
	// one waits (the cap): the next is refused, and polls the store
	var wg sync.WaitGroup
	wg.Go(func() {
		if code, body := get("Bearer "+tok, "abc:7"); code != http.StatusServiceUnavailable || !strings.Contains(body, "Shutting down") {
			t.Errorf("a wait at Close: %d %s", code, body)
		}
	})
	waitFor(t, func() bool { return c.waiters() == 1 })
	if code, body := get("Bearer "+tok, "abc:7"); code != http.StatusServiceUnavailable || !strings.Contains(body, "Too many replicas") {
		t.Fatalf("past the cap: %d %s", code, body)
	}
	c.Close()
	wg.Wait()
}

// waiters is how many long polls wait.
func (c *Changes) waiters() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.waiting
}

// waitFor waits (up to 10 s) until cond holds.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
	}
}
