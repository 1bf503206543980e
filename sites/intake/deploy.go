package intake

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"time"

	"sitedrop/sites"
	"sitedrop/sites/ratelimit"
	"sitedrop/sites/rules"
	"sitedrop/sites/store"
)

// Gate bounds the deploys: anonymous ones per client address, keyed ones
// per account, and all of them to the --concurrent-deploys slots. The
// deploy API, the blob uploads and the pages' redeploys share one.
type Gate struct {
	// Anon is --anon-deploys-per-hour per client address.
	Anon *ratelimit.Limiter
	// Keyed is --deploys-per-minute per account.
	Keyed *ratelimit.Limiter
	slots chan struct{}
	// waits is told of every wait for a slot (Observe); nil: nobody.
	waits SlotObserver
}

// SlotObserver is told of every wait for a deploy slot (the metrics):
// SlotWait is called as the wait starts, and the function it returns as
// it ends, with a slot or without.
type SlotObserver interface {
	SlotWait() (done func())
}

// Observe has o told of every wait for a slot from now on. Call it
// before the gate is in use.
func (g *Gate) Observe(o SlotObserver) { g.waits = o }

// Slots is the number of slots (--concurrent-deploys); InUse how many
// deploys hold one now.
func (g *Gate) Slots() int { return cap(g.slots) }

// InUse is the number of slots held now.
func (g *Gate) InUse() int { return len(g.slots) }

// NewGate is the gate of anonPerHour anonymous deploys an hour per
// client, keyedPerMinute keyed deploys a minute per account and
// concurrent deploys at once.
func NewGate(anonPerHour, keyedPerMinute, concurrent int) *Gate {
	return &Gate{
		Anon:  ratelimit.New(anonPerHour, time.Hour),
		Keyed: ratelimit.New(keyedPerMinute, time.Minute),
		slots: make(chan struct{}, concurrent),
	}
}

// Acquire waits for one of the --concurrent-deploys slots and returns its
// release; it gives up (context.Canceled) when ctx, the request's, ends:
// the client went away.
func (g *Gate) Acquire(ctx context.Context) (func(), error) {
	if g.waits != nil {
		defer g.waits.SlotWait()()
	}
	select {
	case g.slots <- struct{}{}:
		return func() { <-g.slots }, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("waiting for a deploy slot: %w", context.Canceled) // nobody to answer
	}
}

// Deploys reads what a deploy sends (POST /deploy, PUT /deploy/{id}): a
// JSON body or an archive, within --max-body, the memory budget, the
// minimum rate and --max-files, then a processing slot of the gate.
type Deploys struct {
	Guards *Guards
	Gate   *Gate
	// MaxBody is --max-body; MaxFiles --max-files.
	MaxBody  int64
	MaxFiles int
}

// Read reads and decodes r's body, then waits for a deploy slot; release
// frees the slot once the deploy is done. The body is read before the
// slot is taken, within the --deploy-memory budget (lease) and at a
// minimum rate, so that slow clients hold no slot. precheck sees the
// request's metadata before its files are decoded; an archive's (in the
// query) before its body is read. anon tells an anonymous deploy, whose
// archive may unpack to no more than the anonymous cap.
func (d *Deploys) Read(w http.ResponseWriter, r *http.Request, lease *Lease, anon bool, precheck func(*Request) error) (*Request, func(), error) {
	var req *Request
	if format := ArchiveFormat(r.Header.Get("Content-Type")); format != "" {
		var err error
		if req, err = d.archiveMetadata(w, r, precheck); err != nil {
			return nil, nil, err
		}
		if err := d.readArchive(w, r, format, req, lease, anon); err != nil {
			return nil, nil, err
		}
	} else {
		req = &Request{}
		if err := d.readJSON(w, r, req, lease, precheck); err != nil {
			return nil, nil, err
		}
	}
	release, err := d.Gate.Acquire(r.Context())
	if err != nil {
		return nil, nil, err
	}
	return req, release, nil
}

// readJSON decodes a JSON deploy body into req and prechecks it. The
// decoded form is reserved from lease too: its strings copy the body.
func (d *Deploys) readJSON(w http.ResponseWriter, r *http.Request, req *Request, lease *Lease, precheck func(*Request) error) error {
	limit := d.MaxBody
	body, err := d.Guards.Body(w, r, limit, lease)
	if err != nil {
		return err
	}
	br := bufio.NewReaderSize(body, 64)
	if err := ArchiveSentAsJSON(br); err != nil {
		return err
	}
	if err := DecodeDeployJSON(br, limit, &req.DeployRequest); err != nil {
		return err
	}
	if err := lease.Reserve(body.Got); err != nil {
		return err
	}
	return precheck(req)
}

// archiveMetadata reads an archive deploy's metadata (query parameters:
// slug, title, description, favicon, is_spa, draft, alias, message), validates it and runs
// precheck on it. A refused archive is not read; see Guards.Discard.
func (d *Deploys) archiveMetadata(w http.ResponseWriter, r *http.Request, precheck func(*Request) error) (*Request, error) {
	req, err := archiveRequest(r)
	if err == nil {
		_, err = req.Metadata()
	}
	if err == nil {
		err = precheck(req)
	}
	if err != nil {
		d.Guards.Discard(w, r, d.MaxBody)
		return nil, err
	}
	return req, nil
}

// readArchive reads the body of an archive deploy into req (its
// metadata). Nothing is stored until the whole archive has been checked.
// A tar.gz is unpacked as it arrives; a zip, read from its end, is read
// whole first. What the archive holds in memory (the zip, the unpacked
// files) is reserved from lease before it is allocated; a tar.gz's
// compressed bytes pass through and are not held.
//
// The sizes the archive declares (a zip's central directory, each tar
// header) are checked against the limit before anything is inflated: 4 x
// --max-body, and for an anonymous deploy (anon) no more than its
// --anon-storage-per-ip, which it could never store, so that an archive
// too large for it costs nothing to refuse.
func (d *Deploys) readArchive(w http.ResponseWriter, r *http.Request, format string, req *Request, lease *Lease, anon bool) error {
	limit := d.MaxBody
	body, err := d.Guards.Body(w, r, limit, nil)
	if err != nil {
		return err
	}
	lim := sites.ArchiveLimits{
		MaxFiles: d.MaxFiles,
		MaxBytes: ArchiveUnpackFactor * limit,
		Reserve:  lease.Reserve,
		Release:  func(n int64) { lease.Release(n, true) },
	}
	if anonCap := int64(d.Guards.AnonStorage.Max()); anon && anonCap < lim.MaxBytes {
		lim.MaxBytes = anonCap
		lim.TooLarge = (&SiteTooLargeError{Limit: anonCap, Anonymous: true}).Error()
	}
	entries, err := sites.ReadArchiveFrom(body, format, lim)
	if err != nil {
		return err // an *ArchiveError says what the client sent wrong
	}
	// what follows the archive (a gzip trailer) is read too: the whole
	// body is within the limits, and its end lifts the read deadline
	if _, err := io.Copy(io.Discard, body); err != nil {
		return err
	}
	req.archive = &entries
	return nil
}

// StoredContent loads the contents a deploy names by sha256 from blobs,
// each once, within what an archive may unpack to (ArchiveUnpackFactor x
// --max-body) in all, reserving them from lease.
func (d *Deploys) StoredContent(ctx context.Context, blobs store.BlobStore, lease *Lease) sites.BlobLoader {
	limit := ArchiveUnpackFactor * d.MaxBody
	budget := limit
	loaded := map[string][]byte{}
	return func(hash string) ([]byte, error) {
		if data, ok := loaded[hash]; ok {
			return data, nil
		}
		b, err := blobs.Open(ctx, hash)
		if err != nil {
			return nil, err
		}
		defer b.Close()
		if b.Size() > budget {
			return nil, &SiteTooLargeError{Limit: limit}
		}
		if err := lease.Reserve(b.Size()); err != nil {
			return nil, err
		}
		budget -= b.Size()
		data := make([]byte, b.Size())
		if _, err := io.ReadFull(b, data); err != nil {
			return nil, err
		}
		loaded[hash] = data
		return data, nil
	}
}

// ChargeAnonStorage counts an anonymous deploy's bytes against its
// client's (key's) --anon-storage-per-ip budget of the --anon-ttl window:
// a *ratelimit.Error when the budget is spent, a *SiteTooLargeError when
// the deploy alone is larger. refund takes the bytes back when the
// deploy then fails.
func (d *Deploys) ChargeAnonStorage(key string, up sites.Upload) (refund func(), err error) {
	var size int64
	for _, f := range up.Files {
		size += int64(len(f.Data))
	}
	storage := d.Guards.AnonStorage
	limit := int64(storage.Max())
	if size > limit {
		return nil, &SiteTooLargeError{Limit: limit, Anonymous: true}
	}
	if err := storage.CheckN(key, int(size),
		"Anonymous storage limit reached: at most "+sites.FormatBytes(limit)+" from one address until its earlier deploys expire; deploy with an API key"); err != nil {
		return nil, err
	}
	return func() { storage.Refund(key, int(size)) }, nil
}

// Content is what a deploy request carries, checked and ready for the
// service: its metadata (protection included), its files, and its rule
// files parsed (Redirects, and Warnings for the lines not applied).
type Content struct {
	Meta      sites.Metadata
	Upload    sites.Upload
	Redirects []rules.Redirect
	Warnings  []rules.Warning
}

// Content checks req within work, its deploy's budget: its metadata, how
// it publishes its version (an anonymous deploy's, anon, is always live)
// and its files (within --max-files; contents named by sha256 are read with load,
// nil for none), its rule files within limit (their plan's), and last
// its protection, whose password hash is slow on purpose, after the cheap
// checks. The upload's memory (its variants, its changed pages) is
// reserved from lease.
func (d *Deploys) Content(work *Work, req *Request, load sites.BlobLoader, lease *Lease, limit sites.RuleLimit, anon bool) (Content, error) {
	var c Content
	var err error
	if c.Meta, c.Upload, err = req.Content(d.MaxFiles, load); err != nil {
		return c, err
	}
	if c.Upload.Release, err = req.Release(anon); err != nil {
		return c, err
	}
	c.Upload.Memory = lease // the variants and changed pages, too
	// the rule files within their plan's limit, and their cost within the budget
	if c.Redirects, c.Warnings, err = sites.CheckRules(c.Upload.Files, limit); err != nil {
		return c, err
	}
	if err := work.Check(); err != nil {
		return c, err
	}
	if c.Meta.Protect, err = req.Protection(); err != nil {
		return c, err
	}
	return c, work.Check()
}
