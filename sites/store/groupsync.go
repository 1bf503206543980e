package store

import "sync"

// groupSync shares flushes of a whole file system between the batches
// that want one at the same time: a flush (syncFileSystem) writes back
// everything written before it started, so every batch whose writes were
// done before a flush started may count on that flush, and only one runs
// at a time. A batch that arrives while a flush runs waits for the next
// one (the running one may have started before its writes), which then
// serves every batch that arrived meanwhile. Eight concurrent one-page
// deploys asked for sixteen flushes; now about two per round of them.
type groupSync struct {
	// flush flushes the file system of dir (syncFileSystem; tests
	// replace it).
	flush func(dir string) (whole bool, err error)

	mu      sync.Mutex
	changed *sync.Cond
	running bool
	started uint64 // flushes started
	done    uint64 // flushes finished, in order (one runs at a time)
	whole   bool   // what the last finished flush said
	err     error  // and its error
	waiting int    // callers waiting for a flush to finish (tests)
}

func newGroupSync(flush func(string) (bool, error)) *groupSync {
	g := &groupSync{flush: flush}
	g.changed = sync.NewCond(&g.mu)
	return g
}

// sync returns once a flush of dir that started after the call has
// finished: with that flush's answer, or a later one's (a later flush
// also covers the caller's writes; its error, if any, is reported
// though an earlier one succeeded, which errs on the safe side).
func (g *groupSync) sync(dir string) (whole bool, err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	want := g.started + 1 // the next flush to start, never the running one
	for g.done < want {
		if g.running {
			g.waiting++
			g.changed.Wait()
			g.waiting--
			continue
		}
		g.running = true
		g.started++
		n := g.started
		g.mu.Unlock()
		w, err := g.flush(dir)
		g.mu.Lock()
		g.running = false
		g.done, g.whole, g.err = n, w, err
		g.changed.Broadcast()
	}
	return g.whole, g.err
}
