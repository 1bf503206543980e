package ship

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"sitedrop/sites/store/s3store"
)

// Bounds of an Inbox's run.
const (
	// MaxListed is the most delta keys one Take lists.
	MaxListed = 10_000
)

// errListed stops a listing at MaxListed.
var errListed = errors.New("listed enough")

// Inbox is the primary's side: the deltas the replicas wrote.
type Inbox struct {
	objs Objects
}

// NewInbox returns the inbox of the deltas in objs.
func NewInbox(objs Objects) *Inbox {
	return &Inbox{objs: objs}
}

// Pending lists up to max deltas to merge, fairly: the replicas in
// turns, each one's deltas in the order it wrote them, so one replica's
// backlog does not hold up the others'. Keys of other shapes are left
// alone.
func (in *Inbox) Pending(ctx context.Context, max int) ([]s3store.ObjectInfo, error) {
	byReplica := map[string][]s3store.ObjectInfo{}
	var order []string
	n := 0
	err := in.objs.ListObjects(ctx, DeltasPrefix, func(o s3store.ObjectInfo) error {
		rep, _, ok := parseDeltaKey(o.Key)
		if !ok {
			return nil
		}
		if _, seen := byReplica[rep]; !seen {
			order = append(order, rep)
		}
		byReplica[rep] = append(byReplica[rep], o) // listed in key order: by seq
		if n++; n >= MaxListed {
			return errListed
		}
		return nil
	})
	if err != nil && !errors.Is(err, errListed) {
		return nil, fmt.Errorf("list the analytics deltas: %w", err)
	}
	slices.Sort(order)
	var keys []s3store.ObjectInfo
	for len(keys) < max {
		took := false
		for _, rep := range order {
			if q := byReplica[rep]; len(q) > 0 && len(keys) < max {
				keys = append(keys, q[0])
				byReplica[rep] = q[1:]
				took = true
			}
		}
		if !took {
			break
		}
	}
	return keys, nil
}

// Read reads and checks the delta o (as Pending listed it); nil (no
// error) when it is gone. A delta larger than MaxBytes (not read), or
// malformed, is an error wrapping ErrBadDelta: Done drops it.
func (in *Inbox) Read(ctx context.Context, o s3store.ObjectInfo) (*Delta, error) {
	key := o.Key
	if o.Size > MaxBytes {
		return nil, fmt.Errorf("%w: %s is %d bytes", ErrBadDelta, key, o.Size)
	}
	data, _, err := in.objs.GetObject(ctx, key)
	if errors.Is(err, s3store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read an analytics delta: %w", err)
	}
	if len(data) > MaxBytes {
		return nil, fmt.Errorf("%w: %s is %d bytes", ErrBadDelta, key, len(data))
	}
	d, err := ParseDelta(data)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrBadDelta, key, err)
	}
	d.Key = key
	return d, nil
}

// ErrBadDelta is a delta object that cannot be merged.
var ErrBadDelta = errors.New("a bad analytics delta")

// Done deletes the delta at key, merged (or bad).
func (in *Inbox) Done(ctx context.Context, key string) error {
	if err := in.objs.DeleteObject(ctx, key); err != nil {
		return fmt.Errorf("delete a merged analytics delta: %w", err)
	}
	return nil
}
