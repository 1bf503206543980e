package sites

import (
	"context"
	"fmt"
	"time"

	"github.com/pocketbase/pocketbase/core"
	"golang.org/x/sync/errgroup"

	"sitedrop/sites/store"
)

// The digest protocol's side of the store: which of the contents a client
// is about to name the store lacks (MissingHashes), and the upload of one
// (PutUpload). A deploy then names contents by sha256 instead of sending
// them.

// On a store where every question about a blob is a request (S3), one
// MissingHashes asks about at most MaxStoreLookups blobs, lookupParallel
// at a time.
const (
	MaxStoreLookups = 256
	lookupParallel  = 8
)

// UploadKeep is how long an uploaded blob is spared by the collector
// before a deploy references it.
const UploadKeep = time.Hour

// blobKeeper is a store that can spare a blob from the collector for a
// while (FSStore).
type blobKeeper interface {
	KeepUntil(ctx context.Context, hash string, t time.Time) error
}

// MissingHashes returns the hashes of asked (distinct, parsed) that the
// store lacks, in order. Asking refreshes nothing: content nothing
// references may still be collected before the deploy, which then refuses
// it and the client uploads it.
//
// known is nil for a store where a question is cheap (files: a stat):
// each hash is asked about. Otherwise it tells, with no request, that the
// store holds a blob (s3store.Store.Known), and the store is asked about
// few: the hashes that owner's live versions name, or that known knows,
// are present with no request; of the others, the first MaxStoreLookups
// are asked about, and the rest are answered missing without asking. An
// answer "missing" for content the store has costs only its upload, which
// stores nothing again (PutUpload asks first); an answer "present" is
// always true.
func (s *Service) MissingHashes(ctx context.Context, owner *core.Record, asked []string, known func(hash string) bool) ([]string, error) {
	missing := make([]string, 0)
	if known == nil {
		for _, h := range asked {
			ok, err := exists(ctx, s.store, h)
			if err != nil {
				return nil, err
			}
			if !ok {
				missing = append(missing, h)
			}
		}
		return missing, nil
	}

	unknown := make(map[string]bool, len(asked))
	for _, h := range asked {
		if !known(h) {
			unknown[h] = true
		}
	}
	if len(unknown) > 0 {
		err := s.LiveHashes(owner, func(h string) bool {
			delete(unknown, h)
			return len(unknown) > 0
		})
		if err != nil {
			return nil, err
		}
	}
	var lookup []string
	for _, h := range asked {
		if unknown[h] && len(lookup) < MaxStoreLookups {
			lookup = append(lookup, h)
		}
	}
	found := make([]bool, len(lookup))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(lookupParallel)
	for i, h := range lookup {
		g.Go(func() error {
			ok, err := exists(gctx, s.store, h)
			found[i] = ok
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	for i, h := range lookup {
		if found[i] {
			delete(unknown, h)
		}
	}
	for _, h := range asked {
		if unknown[h] {
			missing = append(missing, h)
		}
	}
	return missing, nil
}

// exists asks the store without refreshing the blob's age where it can.
func exists(ctx context.Context, blobs store.BlobStore, h string) (bool, error) {
	if x, ok := blobs.(interface {
		Exists(context.Context, string) (bool, error)
	}); ok {
		return x.Exists(ctx, h)
	}
	return blobs.Has(ctx, h)
}

// ContentHashError refuses an upload whose bytes do not hash to the name
// it was sent under; Got is their sha256.
type ContentHashError struct{ Got string }

func (e *ContentHashError) Error() string {
	return "content does not match its name: its sha256 is " + e.Got
}

// PutUpload stores data, uploaded under the name h (a parsed sha256),
// when it hashes to h (*ContentHashError otherwise), unless the store has
// it already; and, where the store can, spares it from the collector for
// UploadKeep, for the deploy that will name it however long the rest of
// the upload takes.
func (s *Service) PutUpload(ctx context.Context, h string, data []byte) error {
	if got := store.HashBytes(data); got != h {
		return &ContentHashError{Got: got}
	}
	if ok, err := s.store.Has(ctx, h); err != nil {
		return fmt.Errorf("check upload %s: %w", h, err)
	} else if !ok {
		if err := s.store.Put(ctx, h, data); err != nil {
			return fmt.Errorf("store upload %s: %w", h, err)
		}
	}
	if k, ok := s.store.(blobKeeper); ok {
		if err := k.KeepUntil(ctx, h, time.Now().Add(UploadKeep)); err != nil {
			return fmt.Errorf("keep upload %s: %w", h, err)
		}
	}
	return nil
}
