package ship

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"sitedrop/sites/analytics"
	"sitedrop/sites/store/s3store"
)

// saltRefreshTimeout bounds a refresh started from the serving path.
const saltRefreshTimeout = 10 * time.Second

// SaltKey is the key of the salt of date's UTC day.
func SaltKey(date time.Time) string {
	return SaltsPrefix + date.UTC().Format(time.DateOnly) + ".json"
}

// saltObject is a salt as stored.
type saltObject struct {
	Salt []byte `json:"salt"` // 16 bytes (SipHash's key), base64 in JSON
}

// Salts is the analytics.SaltSource every node of one store shares: the
// salts of today and tomorrow, read (or created) ahead by Refresh. Its
// methods are safe for concurrent use; a nil *Salts knows no salt.
type Salts struct {
	objs Objects
	now  func() time.Time

	mu    sync.RWMutex
	known map[string]analytics.Salt // by date, YYYY-MM-DD
	busy  atomic.Bool               // a refresh from Salt is running
}

// NewSalts returns the salts kept in objs.
func NewSalts(objs Objects) *Salts {
	return &Salts{objs: objs, now: time.Now, known: map[string]analytics.Salt{}}
}

// Salt is day's salt when known. When it is not, it starts a Refresh in
// the background and answers false: it never waits.
func (s *Salts) Salt(day time.Time) (analytics.Salt, bool) {
	if s == nil {
		return analytics.Salt{}, false
	}
	s.mu.RLock()
	salt, ok := s.known[day.UTC().Format(time.DateOnly)]
	s.mu.RUnlock()
	if !ok && s.busy.CompareAndSwap(false, true) {
		go func() {
			defer s.busy.Store(false)
			ctx, cancel := context.WithTimeout(context.Background(), saltRefreshTimeout)
			defer cancel()
			s.Refresh(ctx) // an error is Refresh's caller's to log; the next one retries
		}()
	}
	return salt, ok
}

// Refresh makes sure the salts of today and tomorrow are known: read from
// the store, or created there when missing (the first writer wins), so
// that midnight finds the new day's salt ready. It forgets those of past
// days.
func (s *Salts) Refresh(ctx context.Context) error {
	if s == nil {
		return nil
	}
	today := s.now().UTC().Truncate(24 * time.Hour)
	for _, day := range []time.Time{today, today.AddDate(0, 0, 1)} {
		date := day.Format(time.DateOnly)
		s.mu.RLock()
		_, ok := s.known[date]
		s.mu.RUnlock()
		if ok {
			continue
		}
		salt, err := s.load(ctx, day)
		if err != nil {
			return err
		}
		s.mu.Lock()
		s.known[date] = salt
		s.mu.Unlock()
	}
	s.mu.Lock()
	for date := range s.known {
		if date < today.Format(time.DateOnly) {
			delete(s.known, date)
		}
	}
	s.mu.Unlock()
	return nil
}

// load reads day's salt, creating it first when there is none.
func (s *Salts) load(ctx context.Context, day time.Time) (analytics.Salt, error) {
	key := SaltKey(day)
	for range 3 {
		data, _, err := s.objs.GetObject(ctx, key)
		if err == nil {
			var o saltObject
			if err := json.Unmarshal(data, &o); err != nil || len(o.Salt) != len(analytics.Salt{}) {
				return analytics.Salt{}, fmt.Errorf("analytics salt %s: malformed", key)
			}
			return analytics.Salt(o.Salt), nil
		}
		if !errors.Is(err, s3store.ErrNotFound) {
			return analytics.Salt{}, fmt.Errorf("read the analytics salt: %w", err)
		}
		var salt analytics.Salt
		rand.Read(salt[:])
		data, _ = json.Marshal(saltObject{Salt: salt[:]})
		_, err = s.objs.PutObject(ctx, key, data, s3store.Condition{IfNoneMatch: true})
		if err == nil {
			return salt, nil
		}
		if !errors.Is(err, s3store.ErrPrecondition) {
			return analytics.Salt{}, fmt.Errorf("create the analytics salt: %w", err)
		}
		// another node created it first: read theirs
	}
	return analytics.Salt{}, fmt.Errorf("analytics salt %s: created and gone again", key)
}

// Purge deletes the salts of the days that ended more than
// analytics.DayGrace before now: a past day's salt is not kept. The
// primary calls it.
func (s *Salts) Purge(ctx context.Context, now time.Time) error {
	if s == nil {
		return nil
	}
	var old []string
	err := s.objs.ListObjects(ctx, SaltsPrefix, func(o s3store.ObjectInfo) error {
		date, ok := strings.CutSuffix(strings.TrimPrefix(o.Key, SaltsPrefix), ".json")
		day, err := time.Parse(time.DateOnly, date)
		if ok && err == nil && !now.Before(day.AddDate(0, 0, 1).Add(analytics.DayGrace)) {
			old = append(old, o.Key)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("list the analytics salts: %w", err)
	}
	for _, k := range old {
		if err := s.objs.DeleteObject(ctx, k); err != nil {
			return fmt.Errorf("delete a past analytics salt: %w", err)
		}
	}
	return nil
}
