package accounts

import (
	"sync"
	"time"
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
	// FlashTTL is how long a message waits for its page.
	FlashTTL = 5 * time.Minute
	// FlashMaxSessions bounds the store; past it expired entries are
	// swept, then the oldest dropped.
	FlashMaxSessions = 10000
	// FlashMaxPerSession bounds the messages queued for one session.
	FlashMaxPerSession = 4
)

// Flash is one message for the next page of a browser session.
type Flash struct {
	// Kind tells a success from an error (the pages' ui.FlashSuccess,
	// ui.FlashError).
	Kind string
	// Text is the message.
	Text string
	// Secret, when set, is shown once under Text (a new API key).
	Secret string
	// Panel, when set, names the part of the next page the message
	// belongs to (the id of the panel or row holding the form that was
	// posted): the page shows it there, beside that form, and at its top
	// when it has no such part.
	Panel string
}

// Flashes holds the pending messages of each browser session, keyed by
// a string (the hash of its token). The zero value is ready to use.
type Flashes struct {
	mu sync.Mutex
	m  map[string]*flashEntry // session token hash → messages
}

// flashEntry is one session's pending messages.
type flashEntry struct {
	msgs    []Flash
	expires time.Time
}

// Add queues f for the session key.
func (s *Flashes) Add(key string, f Flash, now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = make(map[string]*flashEntry)
	}
	ent := s.m[key]
	if ent == nil || now.After(ent.expires) {
		if len(s.m) >= FlashMaxSessions {
			s.evict(now)
		}
		ent = &flashEntry{}
		s.m[key] = ent
	}
	if len(ent.msgs) >= FlashMaxPerSession {
		ent.msgs = ent.msgs[1:]
	}
	ent.msgs = append(ent.msgs, f)
	ent.expires = now.Add(FlashTTL)
}

// Take returns and forgets the pending messages of the session key.
func (s *Flashes) Take(key string, now time.Time) []Flash {
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

// Len is the number of sessions with pending messages (expired ones
// included until they are swept).
func (s *Flashes) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.m)
}

// evict makes room: expired entries go, and when none had expired, the one
// closest to expiry. Called with mu held, only when the store is full.
func (s *Flashes) evict(now time.Time) {
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
	if len(s.m) >= FlashMaxSessions && oldestKey != "" {
		delete(s.m, oldestKey)
	}
}
