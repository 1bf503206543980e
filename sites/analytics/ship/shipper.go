package ship

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"sitedrop/sites/analytics"
	"sitedrop/sites/store/s3store"
)

// Defaults and bounds of a Shipper.
const (
	// DefaultInterval is how often a replica ships: as often as the
	// primary writes its own counts.
	DefaultInterval = time.Minute
	// MaxPending bounds the site-days a Shipper keeps while the store
	// refuses its writes; past it the oldest are dropped (and logged).
	MaxPending = 10_000
	// writeTimeout bounds one delta's write.
	writeTimeout = 10 * time.Second
)

// ShipperConfig is what a Shipper needs.
type ShipperConfig struct {
	Objects Objects
	// Aggregator counts the replica's answers (analytics.Options.Ship).
	Aggregator *analytics.Aggregator
	// Salts are refreshed at every ship (so tomorrow's is known before
	// midnight); nil: none.
	Salts *Salts
	// Interval is how often the counts are shipped. Default
	// DefaultInterval.
	Interval time.Duration
	Logger   *slog.Logger
}

// Shipper writes a replica's counts to the store as delta objects; see
// the package comment.
type Shipper struct {
	cfg ShipperConfig
	log *slog.Logger
	id  string // this process's replica id: random, so two never collide

	mu     sync.Mutex // one ship at a time
	seq    int64
	unsent []delta // encoded, in order, not known to be written
}

// delta is an encoded delta object.
type delta struct {
	key  string
	data []byte
	days int
}

// NewShipper returns a Shipper; Run ships periodically, Ship once.
func NewShipper(cfg ShipperConfig) *Shipper {
	if cfg.Interval <= 0 {
		cfg.Interval = DefaultInterval
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	var b [8]byte
	rand.Read(b[:])
	return &Shipper{cfg: cfg, log: cfg.Logger, id: hex.EncodeToString(b[:])}
}

// Run ships every Interval until ctx ends; it does not ship at the end:
// call Ship with a bounded context then (the replica's SIGTERM).
func (s *Shipper) Run(ctx context.Context) {
	t := time.NewTicker(s.cfg.Interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if err := s.cfg.Salts.Refresh(ctx); err != nil && ctx.Err() == nil {
			s.log.Error("replica: read the analytics salts", "error", err)
		}
		if err := s.Ship(ctx); err != nil && ctx.Err() == nil {
			s.log.Error("replica: ship analytics; kept for the next try", "error", err)
		}
	}
}

// Ship writes what was counted since the last ship, in deltas of at most
// MaxDays site-days, after those earlier ships could not write, until ctx
// ends. A delta whose write failed is written again as it was, under the
// same key: when the failed write had in fact landed, the second finds
// its own bytes there, and the counts go in once. What is not written is
// kept for the next ship (up to MaxPending site-days).
func (s *Shipper) Ship(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	days := s.cfg.Aggregator.Flush()
	for len(days) > 0 {
		n := min(len(days), MaxDays)
		d := Delta{Replica: s.id}
		for _, day := range days[:n] {
			d.Days = append(d.Days, FromDay(day))
		}
		s.seq++
		d.Seq = s.seq
		data, err := json.Marshal(d)
		if err != nil {
			return fmt.Errorf("encode an analytics delta: %w", err)
		}
		s.unsent = append(s.unsent, delta{key: DeltaKey(s.id, s.seq), data: data, days: n})
		days = days[n:]
	}
	var err error
	for len(s.unsent) > 0 {
		err = s.write(ctx, s.unsent[0])
		if errors.Is(err, errKeyTaken) {
			// not ours (ids are random: never seen): the next key
			s.seq++
			s.unsent[0].key = DeltaKey(s.id, s.seq)
			err = s.write(ctx, s.unsent[0])
		}
		if err != nil {
			break
		}
		s.unsent = s.unsent[1:]
	}
	total := 0
	for _, d := range s.unsent {
		total += d.days
	}
	for total > MaxPending {
		s.log.Error("replica: analytics dropped: the store refused them too long", "days", s.unsent[0].days)
		total -= s.unsent[0].days
		s.unsent = s.unsent[1:]
	}
	return err
}

// errKeyTaken is a delta key that holds another delta.
var errKeyTaken = errors.New("the key holds another delta")

// write creates d's object; a key already holding d's bytes is d written
// by an earlier try.
func (s *Shipper) write(ctx context.Context, d delta) error {
	wctx, cancel := context.WithTimeout(ctx, writeTimeout)
	defer cancel()
	_, err := s.cfg.Objects.PutObject(wctx, d.key, d.data, s3store.Condition{IfNoneMatch: true})
	if errors.Is(err, s3store.ErrPrecondition) {
		got, _, gerr := s.cfg.Objects.GetObject(wctx, d.key)
		switch {
		case errors.Is(gerr, s3store.ErrNotFound):
			return nil // written, and merged by the primary since
		case gerr != nil:
			return fmt.Errorf("read back an analytics delta: %w", gerr)
		case bytes.Equal(got, d.data):
			return nil
		}
		return fmt.Errorf("analytics delta %s: %w", d.key, errKeyTaken)
	}
	if err != nil {
		return fmt.Errorf("write an analytics delta: %w", err)
	}
	return nil
}
