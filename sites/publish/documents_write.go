package publish

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"golang.org/x/sync/errgroup"

	"sitedrop/sites"
	"sitedrop/sites/store/s3store"
)

// hosts are the hosts site answers on with its live state, its own
// first, and its preview hosts (host → label), which it answers on with
// a version's.
func (p *Publisher) hosts(site *sites.Site) (hosts []string, previews map[string]string, err error) {
	hosts = []string{p.cfg.SiteHost(site.Slug)}
	if p.cfg.Previews != nil {
		labels, err := p.cfg.Previews(site)
		if err != nil {
			return nil, nil, fmt.Errorf("previews of %s: %w", site.Slug, err)
		}
		previews = make(map[string]string, len(labels))
		for _, l := range labels {
			previews[p.cfg.SiteHost(l)] = l
		}
	}
	if p.cfg.ExtraHosts == nil || site.MovedTo != "" {
		// a renamed site's old slug redirects on its own hosts only:
		// the custom domains serve the site under its new slug
		return hosts, previews, nil
	}
	extra, err := p.cfg.ExtraHosts(site.ID)
	if err != nil {
		return nil, nil, fmt.Errorf("hosts of %s: %w", site.Slug, err)
	}
	for _, h := range extra {
		if !slices.Contains(hosts, h) {
			hosts = append(hosts, h)
		}
	}
	return hosts, previews, nil
}

// publishSlug writes slug's live state to each of its hosts and each
// preview's to its preview host, and removes the documents of hosts it
// no longer has (all of them once it is gone).
func (p *Publisher) publishSlug(ctx context.Context, slug string) error {
	own := p.cfg.SiteHost(slug)
	old, etag, err := p.get(ctx, own)
	if err != nil {
		return err
	}
	var before []string
	if old != nil {
		before = append(slices.Clone(old.Hosts), old.Previews...)
	}
	site, err := p.cfg.Load(slug)
	if errors.Is(err, sites.ErrNotFound) {
		if err := p.drop(ctx, own, slug, old); err != nil {
			return err
		}
		for _, h := range before {
			if h == own {
				continue
			}
			if err := p.unpublishHost(ctx, h, slug); err != nil {
				return err
			}
		}
		return nil
	}
	if err != nil {
		return err
	}
	siteJSON, err := json.Marshal(site)
	if err != nil {
		return fmt.Errorf("encode site: %w", err)
	}
	hosts, previews, err := p.hosts(site)
	if err != nil {
		return err
	}
	// The previews first: the own host's document, which lists them, is
	// written once they are.
	previewHosts := slices.Sorted(maps.Keys(previews))
	for _, h := range previewHosts {
		if err := p.publishPreview(ctx, h, previews[h]); err != nil {
			return err
		}
	}
	for _, h := range hosts {
		var read *stored
		var listed []string
		if h == own {
			read = &stored{old, etag} // read above: no second read
			listed = previewHosts
		}
		if err := p.publishHost(ctx, h, hosts, listed, site, siteJSON, read); err != nil {
			return err
		}
	}
	for _, h := range before {
		if _, ok := previews[h]; !ok && !slices.Contains(hosts, h) {
			if err := p.unpublishHost(ctx, h, slug); err != nil {
				return err
			}
		}
	}
	return nil
}

// publishPreview writes the preview label's state to its host; a preview
// gone since it was listed (pruned, its alias deleted) is removed.
func (p *Publisher) publishPreview(ctx context.Context, host, label string) error {
	site, err := p.cfg.Load(label)
	if errors.Is(err, sites.ErrNotFound) {
		return p.unpublishHost(ctx, host, "")
	}
	if err != nil {
		return fmt.Errorf("load %s: %w", label, err)
	}
	siteJSON, err := json.Marshal(site)
	if err != nil {
		return fmt.Errorf("encode %s: %w", label, err)
	}
	return p.publishHost(ctx, host, []string{host}, nil, site, siteJSON, nil)
}

// get reads host's document; nil when there is none.
func (p *Publisher) get(ctx context.Context, host string) (*rawDocument, string, error) {
	data, etag, err := p.cfg.Objects.GetObject(ctx, Key(host))
	if errors.Is(err, s3store.ErrNotFound) {
		return nil, "", nil
	}
	if err != nil {
		return nil, "", err
	}
	var d rawDocument
	if err := json.Unmarshal(data, &d); err != nil {
		p.log.Warn("replace an unreadable site document", "host", host, "error", err)
		return &rawDocument{}, etag, nil
	}
	return &d, etag, nil
}

// stored is a host's document as read (nil: none) and its ETag.
type stored struct {
	doc  *rawDocument
	etag string
}

// publishHost replaces host's document with site (and the preview hosts
// listed, for the site's own host), atomically: the write
// is conditional on the ETag read (or on there being none), and a lost
// race reads again. An unchanged document is not written; a written one
// is noted for the change feed. read, when not nil, is host's document as
// the caller read it, used by the first try.
func (p *Publisher) publishHost(ctx context.Context, host string, hosts, previews []string, site *sites.Site, siteJSON []byte, read *stored) error {
	for range maxConflicts {
		if read == nil {
			doc, etag, err := p.get(ctx, host)
			if err != nil {
				return err
			}
			read = &stored{doc, etag}
		}
		old, etag := read.doc, read.etag
		read = nil // a lost race reads again
		gen := time.Now().UnixMicro()
		if old != nil {
			if bytes.Equal(old.Site, siteJSON) && slices.Equal(old.Hosts, hosts) && slices.Equal(old.Previews, previews) {
				return nil
			}
			if err := p.spare(ctx, old.Site, site.Files); err != nil {
				return err
			}
			gen = max(gen, old.Generation+1)
		}
		doc, err := json.Marshal(rawDocument{Generation: gen, Host: host, Hosts: hosts, Previews: previews, Site: siteJSON})
		if err != nil {
			return fmt.Errorf("encode document: %w", err)
		}
		cond := s3store.Condition{IfNoneMatch: true}
		if old != nil {
			cond = s3store.Condition{IfMatch: etag}
		}
		written, err := p.cfg.Objects.PutObject(ctx, Key(host), doc, cond)
		if errors.Is(err, s3store.ErrPrecondition) {
			continue // another writer: read again
		}
		if err != nil {
			return err
		}
		p.note(Change{Host: host, ETag: written, Generation: gen})
		return nil
	}
	return fmt.Errorf("publish %s: the document kept changing under %d tries", host, maxConflicts)
}

// unpublishHost removes host's document, when slug is empty or the
// document is slug's (a renamed site's new document is kept); its blobs
// are spared for Retention.
func (p *Publisher) unpublishHost(ctx context.Context, host, slug string) error {
	old, _, err := p.get(ctx, host)
	if err != nil {
		return err
	}
	return p.drop(ctx, host, slug, old)
}

// drop is unpublishHost with host's document old as read (nil: none); a
// removal is noted for the change feed.
func (p *Publisher) drop(ctx context.Context, host, slug string, old *rawDocument) error {
	if old == nil {
		return nil
	}
	if slug != "" {
		var s struct{ Slug string }
		if json.Unmarshal(old.Site, &s) == nil && s.Slug != "" && s.Slug != slug {
			return nil
		}
	}
	if err := p.spare(ctx, old.Site, nil); err != nil {
		return err
	}
	if err := p.cfg.Objects.DeleteObject(ctx, Key(host)); err != nil {
		return err
	}
	p.note(Change{Host: host, Generation: old.Generation + 1})
	return nil
}

// spare keeps, for Retention, the blobs of the published site oldSite
// that now is not in files.
func (p *Publisher) spare(ctx context.Context, oldSite json.RawMessage, now sites.Manifest) error {
	var old struct{ Files sites.Manifest }
	if len(oldSite) == 0 || json.Unmarshal(oldSite, &old) != nil {
		return nil
	}
	keep := map[string]struct{}{}
	for _, e := range old.Files {
		e.Hashes(func(h string) { keep[h] = struct{}{} })
	}
	for _, e := range now {
		e.Hashes(func(h string) { delete(keep, h) })
	}
	if len(keep) == 0 || p.cfg.Keep == nil {
		return nil
	}
	until := time.Now().Add(p.cfg.Retention)
	var g errgroup.Group
	g.SetLimit(keepParallel)
	for h := range keep {
		g.Go(func() error { return p.cfg.Keep(ctx, h, until) })
	}
	if err := g.Wait(); err != nil {
		return fmt.Errorf("spare the blobs of a replaced site: %w", err)
	}
	return nil
}
