package sites

import (
	"context"
	"fmt"
	"io"
	"sort"

	"github.com/pocketbase/pocketbase/core"
)

// UpdateSettings changes a deployment's descriptive fields from the
// dashboard. Title, description and favicon are written into its HTML at
// deploy time, so a change of any of them makes a new version: the live
// version's files as the client sent them (each entry's Source, else its
// bytes) deployed again with the merged metadata, exactly as a PUT with
// the same files would, so the record hooks, the deployment.updated
// webhooks and rollback behave as for a PUT. A change of IsSPA alone only
// updates the record: serving reads it from there. Fields equal to the
// current values change nothing; changed reports whether anything did.
func (s *Service) UpdateSettings(ctx context.Context, dep *core.Record, meta Metadata) (out *core.Record, changed bool, err error) {
	unlock := s.lockDeployment(dep.Id)
	defer unlock()
	fresh, err := s.app.FindRecordById(DeploymentsCollection, dep.Id)
	if err != nil {
		return nil, false, ErrNotFound
	}
	cur := resolveMeta(fresh, Metadata{})
	next := resolveMeta(fresh, meta)
	if next == cur {
		return fresh, false, nil
	}
	if next.title == cur.title && next.description == cur.description && next.favicon == cur.favicon {
		fresh.Set(FieldIsSPA, next.isSPA)
		if err := s.app.Save(fresh); err != nil {
			return nil, false, fmt.Errorf("save settings: %w", err)
		}
		return fresh, true, nil
	}
	files, err := s.liveSources(ctx, fresh)
	if err != nil {
		return nil, false, err
	}
	up := Upload{StorageType: fresh.GetString(FieldStorageType), Files: files}
	out, _, err = s.replaceLocked(ctx, fresh, meta, up)
	if err != nil {
		return nil, false, err
	}
	return out, true, nil
}

// liveSources reads the files of dep's live version as the client sent
// them, in path order.
func (s *Service) liveSources(ctx context.Context, dep *core.Record) ([]File, error) {
	m, err := liveManifest(s.app, dep)
	if err != nil {
		return nil, err
	}
	paths := make([]string, 0, len(m))
	for p := range m {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	files := make([]File, 0, len(m))
	for _, p := range paths {
		e := m[p]
		h := e.Hash
		if e.Source != "" {
			h = e.Source
		}
		data, err := s.readBlob(ctx, h)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", p, err)
		}
		files = append(files, File{Path: p, ContentType: e.Type, Data: data})
	}
	return files, nil
}

// readBlob returns the whole content of a stored blob.
func (s *Service) readBlob(ctx context.Context, hash string) ([]byte, error) {
	b, err := s.store.Open(ctx, hash)
	if err != nil {
		return nil, fmt.Errorf("open blob: %w", err)
	}
	defer b.Close()
	data, err := io.ReadAll(b)
	if err != nil {
		return nil, fmt.Errorf("read blob: %w", err)
	}
	return data, nil
}
