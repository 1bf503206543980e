package hooks

import (
	"sync"
	"time"

	"github.com/pocketbase/pocketbase/core"

	"sitedrop/sites/accounts"
	"sitedrop/ui"
)

// Flash messages carry the outcome of a form post (POST → 303 → GET) to the
// page the browser loads next, so that a reload never repeats an action and
// still says what happened.
//
// They are kept in memory, keyed by the hash of the browser's session
// token, never in a cookie: a site host on the same registrable domain could
// toss a cookie onto the web host, and a new API key (shown once) must not
// travel in one. A restart loses pending messages, which is harmless.
const (
	// flashTTL is how long a message waits for its page.
	flashTTL = 5 * time.Minute
	// flashMaxSessions bounds the store; past it expired entries are
	// swept, then the oldest dropped.
	flashMaxSessions = 10000
	// flashMaxPerSession bounds the messages queued for one session.
	flashMaxPerSession = 4
)

// flashStore holds the pending messages of each browser session.
type flashStore struct {
	mu sync.Mutex
	m  map[string]*flashEntry // session token hash → messages
}

// flashEntry is one session's pending messages.
type flashEntry struct {
	msgs    []ui.Flash
	expires time.Time
}

// add queues f for the session whose token hashes to key.
func (s *flashStore) add(key string, f ui.Flash, now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = make(map[string]*flashEntry)
	}
	ent := s.m[key]
	if ent == nil || now.After(ent.expires) {
		if len(s.m) >= flashMaxSessions {
			s.evict(now)
		}
		ent = &flashEntry{}
		s.m[key] = ent
	}
	if len(ent.msgs) >= flashMaxPerSession {
		ent.msgs = ent.msgs[1:]
	}
	ent.msgs = append(ent.msgs, f)
	ent.expires = now.Add(flashTTL)
}

// take returns and forgets the session's pending messages.
func (s *flashStore) take(key string, now time.Time) []ui.Flash {
	s.mu.Lock()
	defer s.mu.Unlock()
	ent := s.m[key]
	if ent == nil {
		return nil
	}
	delete(s.m, key)
	if now.After(ent.expires) {
		return nil
	}
	return ent.msgs
}

// evict makes room: expired entries go, and when none had expired, the one
// closest to expiry. Called with mu held, only when the store is full.
func (s *flashStore) evict(now time.Time) {
	var oldestKey string
	var oldest time.Time
	for k, ent := range s.m {
		if now.After(ent.expires) {
			delete(s.m, k)
			continue
		}
		if oldestKey == "" || ent.expires.Before(oldest) {
			oldestKey, oldest = k, ent.expires
		}
	}
	if len(s.m) >= flashMaxSessions && oldestKey != "" {
		delete(s.m, oldestKey)
	}
}

// flash queues a message for the next page this browser session loads.
// Without a session it does nothing. kind is ui.FlashSuccess or
// ui.FlashError.
func (s *sessions) flash(e *core.RequestEvent, kind, text string) {
	s.flashWith(e, ui.Flash{Kind: kind, Text: text})
}

// flashWith queues f (which may carry a secret shown once) for the next
// page this browser session loads. Without a session it does nothing.
func (s *sessions) flashWith(e *core.RequestEvent, f ui.Flash) {
	tok := s.token(e)
	if tok == "" {
		return
	}
	s.flashes.add(accounts.HashSecret(tok), f, time.Now())
}

// layout is what the page frame shows about the visitor: who is signed
// in, and the messages left by the form post that led here (taken, so a
// reload shows them no more).
func (s *sessions) layout(e *core.RequestEvent, user *core.Record) ui.LayoutProps {
	lp := layout(user)
	if tok := s.token(e); tok != "" && user != nil {
		lp.Flashes = s.flashes.take(accounts.HashSecret(tok), time.Now())
	}
	return lp
}
