package sites

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/pocketbase/dbx"
	"github.com/pocketbase/pocketbase/core"

	"sitedrop/sites/rules"
	"sitedrop/sites/store"
)

// BlocklistCollection holds what an admin refuses on a public instance:
// one row a value, of one kind.
const BlocklistCollection = "blocklist"

// Fields of a blocklist record.
const (
	FieldBlockKind      = "kind"
	FieldBlockValue     = "value"
	FieldBlockNote      = "note"
	FieldBlockCreatedBy = "created_by"
	FieldBlockCreated   = "created"
)

// The kinds of block.
const (
	// BlockContentHash is a file's sha256 (64 lowercase hex digits): a
	// deploy holding a file with these bytes, as sent or as stored, is
	// refused, and so is their upload (PUT /blobs) or a question about
	// them (POST /blobs/missing).
	BlockContentHash = "content_hash"
	// BlockRedirectTarget is a host or URL pattern: a deploy whose
	// _redirects has a rule pointing there is refused. "evil.example"
	// matches that host and every host under it, "*.evil.example" only
	// the hosts under it; a path after the host ("evil.example/login")
	// also asks that the target's path start with it. The scheme, a
	// port and the case of the host do not matter.
	BlockRedirectTarget = "redirect_target"
	// BlockEmailDomain is an e-mail domain: no new account is made for
	// an address at it or under it ("mail.example" blocks
	// "a@mail.example" and "a@x.mail.example"). Existing accounts keep
	// signing in: banning them is a decision about a person, not a
	// domain.
	BlockEmailDomain = "email_domain"
)

// BlockKinds are the kinds of block, in the order the admin API lists them.
var BlockKinds = []string{BlockContentHash, BlockRedirectTarget, BlockEmailDomain}

// MaxBlockNote is the longest note of a block, in bytes.
const MaxBlockNote = 500

// ErrBlockNotFound: no block with that id.
var ErrBlockNotFound = errors.New("block not found")

// ErrAlreadyBlocked: the same kind and value is blocked already.
var ErrAlreadyBlocked = errors.New("already blocked")

// BlockedContentError refuses a deploy or an upload holding blocked
// content: Path names the file (empty for an upload, named by Hash).
type BlockedContentError struct {
	Path string
	Hash string
}

func (e *BlockedContentError) Error() string {
	if e.Path != "" {
		return "Content blocked: " + e.Path + " is on this server's blocklist"
	}
	return "Content blocked: sha256 " + e.Hash + " is on this server's blocklist"
}

// BlockedTargetError refuses a deploy whose _redirects points at a
// blocked host or URL: Line is the rule's line, Target where it points.
type BlockedTargetError struct {
	Line   int
	Target string
}

func (e *BlockedTargetError) Error() string {
	return fmt.Sprintf("Redirect target blocked: _redirects line %d points to %s, which this server blocks", e.Line, e.Target)
}

// BlockedEmailDomainError refuses a sign-up from an address whose domain
// is blocked.
type BlockedEmailDomainError struct{ Domain string }

func (e *BlockedEmailDomainError) Error() string {
	return "Sign-up from " + e.Domain + " addresses is not allowed on this server"
}

// Block is one blocklist record.
type Block struct{ core.BaseRecordProxy }

// BlockOf wraps a blocklist record.
func BlockOf(rec *core.Record) *Block {
	b := new(Block)
	b.SetProxyRecord(rec)
	return b
}

// Kind is the block's kind (BlockKinds).
func (b *Block) Kind() string { return b.GetString(FieldBlockKind) }

// Value is what is blocked, normalised (NormalizeBlock).
func (b *Block) Value() string { return b.GetString(FieldBlockValue) }

// Note says why.
func (b *Block) Note() string { return b.GetString(FieldBlockNote) }

// CreatedBy is the e-mail of the superuser who added it ("" when unknown).
func (b *Block) CreatedBy() string { return b.GetString(FieldBlockCreatedBy) }

// NormalizeBlock checks value as a block of kind and returns it in the
// form it is stored and matched in: a *FieldError naming "kind" or
// "value" when it is not one.
func NormalizeBlock(kind, value string) (string, error) {
	v := strings.TrimSpace(value)
	switch kind {
	case BlockContentHash:
		h, ok := store.ParseHash(v)
		if !ok {
			return "", &FieldError{Field: "value", Msg: "value: " + store.InvalidHashMsg(v)}
		}
		return h, nil
	case BlockRedirectTarget:
		p, err := parseTargetPattern(v)
		if err != nil {
			return "", err
		}
		return p.String(), nil
	case BlockEmailDomain:
		d := strings.ToLower(strings.TrimPrefix(v, "@"))
		if !validDomain(d) {
			return "", &FieldError{Field: "value", Msg: fmt.Sprintf("value: %q is not an e-mail domain (such as mail.example)", v)}
		}
		return d, nil
	}
	return "", &FieldError{Field: "kind", Msg: "kind must be one of " + strings.Join(BlockKinds, ", ")}
}

// targetPattern is a redirect_target block: a host (and, with sub, only
// the hosts under it) and an optional path prefix.
type targetPattern struct {
	host string
	sub  bool
	path string
}

// String is the pattern as it is stored.
func (p targetPattern) String() string {
	s := p.host + p.path
	if p.sub {
		s = "*." + s
	}
	return s
}

// matches tells whether a target's host and path fall under p.
func (p targetPattern) matches(host, path string) bool {
	switch {
	case host == p.host:
		if p.sub {
			return false
		}
	case !strings.HasSuffix(host, "."+p.host):
		return false
	}
	return strings.HasPrefix(path, p.path)
}

// parseTargetPattern reads a redirect_target value: [scheme://][*.]host[:port][/path].
func parseTargetPattern(v string) (targetPattern, error) {
	bad := &FieldError{Field: "value", Msg: fmt.Sprintf("value: %q is not a host or URL pattern (such as evil.example, *.evil.example or evil.example/login)", v)}
	s := v
	if i := strings.Index(s, "://"); i >= 0 {
		scheme := strings.ToLower(s[:i])
		if scheme != "http" && scheme != "https" {
			return targetPattern{}, bad
		}
		s = s[i+3:]
	}
	s = strings.TrimPrefix(s, "//")
	var p targetPattern
	if rest, ok := strings.CutPrefix(s, "*."); ok {
		p.sub, s = true, rest
	}
	host, path := s, ""
	if i := strings.IndexByte(s, '/'); i >= 0 {
		host, path = s[:i], s[i:]
	}
	host, ok := targetHost(host)
	if !ok || strings.ContainsAny(path, " \t\r\n?#") {
		return targetPattern{}, bad
	}
	if path == "/" {
		path = ""
	}
	p.host, p.path = host, path
	return p, nil
}

// targetHost is a host of a pattern or a target, normalised: lower case,
// without a port or a trailing dot; ok is false when it is not a domain
// name or an IP address.
func targetHost(h string) (string, bool) {
	if i := strings.LastIndexByte(h, ':'); i >= 0 && !strings.Contains(h, "]") {
		h = h[:i]
	}
	h = strings.TrimSuffix(strings.ToLower(h), ".")
	h = strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
	if strings.Contains(h, ":") { // an IPv6 address
		for _, c := range h {
			if !strings.ContainsRune("0123456789abcdef:.", c) {
				return "", false
			}
		}
		return h, true
	}
	return h, validDomain(h)
}

// validDomain tells a domain name of letters, digits and hyphens in dot-
// separated labels (an IPv4 address is one too), at most 253 characters.
func validDomain(d string) bool {
	if d == "" || len(d) > 253 {
		return false
	}
	for _, label := range strings.Split(d, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, c := range label {
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
				return false
			}
		}
	}
	return true
}

// Blocklist is the blocklist in memory: what the deploys, uploads and
// sign-ups ask about, each question a map lookup or a walk over the few
// redirect patterns. It is read from the collection on first use and
// again after every change (Reload, which the record hooks call), so an
// edit in the admin API or the dashboard applies to the next request.
//
// A nil *Blocklist blocks nothing.
type Blocklist struct {
	app core.App
	mu  sync.Mutex // one reload at a time
	cur atomic.Pointer[blockSet]
}

// blockSet is one reading of the collection.
type blockSet struct {
	hashes  map[string]bool
	targets []targetPattern
	domains map[string]bool
}

// NewBlocklist returns the blocklist of app's database, read on first use.
func NewBlocklist(app core.App) *Blocklist { return &Blocklist{app: app} }

// Reload reads the collection again. Until the collection exists (a
// server whose migrations have not run yet) nothing is blocked and
// nothing is kept, so the next question reads again.
func (b *Blocklist) Reload() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	set, err := b.read()
	if err != nil {
		b.cur.Store(nil)
		return err
	}
	b.cur.Store(set)
	return nil
}

// read reads every block.
func (b *Blocklist) read() (*blockSet, error) {
	var rows []struct {
		Kind  string `db:"kind"`
		Value string `db:"value"`
	}
	err := b.app.DB().Select("kind", "value").From(BlocklistCollection).All(&rows)
	if err != nil {
		return nil, fmt.Errorf("read blocklist: %w", err)
	}
	set := &blockSet{hashes: map[string]bool{}, domains: map[string]bool{}}
	for _, r := range rows {
		switch r.Kind {
		case BlockContentHash:
			set.hashes[r.Value] = true
		case BlockEmailDomain:
			set.domains[r.Value] = true
		case BlockRedirectTarget:
			if p, err := parseTargetPattern(r.Value); err == nil {
				set.targets = append(set.targets, p)
			}
		}
	}
	return set, nil
}

// set is the current reading (read now if there is none).
func (b *Blocklist) set() *blockSet {
	if b == nil {
		return nil
	}
	if s := b.cur.Load(); s != nil {
		return s
	}
	if err := b.Reload(); err != nil {
		b.app.Logger().Warn("blocklist not read: nothing is blocked", "error", err)
		return nil
	}
	return b.cur.Load()
}

// HashBlocked tells whether content with the sha256 h is blocked.
func (b *Blocklist) HashBlocked(h string) bool {
	s := b.set()
	return s != nil && s.hashes[h]
}

// hashScreen is the check of each file's hashes a deploy makes, nil when
// no content is blocked (the deploy then asks nothing).
func (b *Blocklist) hashScreen() func(h string) bool {
	s := b.set()
	if s == nil || len(s.hashes) == 0 {
		return nil
	}
	return func(h string) bool { return s.hashes[h] }
}

// checkVersion refuses, with a *BlockedContentError naming the first
// such file (by path), a version that holds blocked content: a file whose
// bytes, as sent or as stored, are blocked.
func (b *Blocklist) checkVersion(ver *core.Record) error {
	blocked := b.hashScreen()
	if blocked == nil {
		return nil
	}
	m, err := ParseManifest([]byte(ver.GetString(FieldVersionManifest)))
	if err != nil {
		return err
	}
	var hit []string
	for p, e := range m {
		if blocked(e.Hash) || e.Source != "" && blocked(e.Source) {
			hit = append(hit, p)
		}
	}
	if len(hit) == 0 {
		return nil
	}
	sort.Strings(hit)
	return &BlockedContentError{Path: hit[0]}
}

// CheckHashes refuses the first of hashes (parsed sha256s) that is
// blocked, with a *BlockedContentError naming it.
func (b *Blocklist) CheckHashes(hashes []string) error {
	s := b.set()
	if s == nil || len(s.hashes) == 0 {
		return nil
	}
	for _, h := range hashes {
		if s.hashes[h] {
			return &BlockedContentError{Hash: h}
		}
	}
	return nil
}

// TargetBlocked tells whether a redirect target (a path, an absolute
// http(s) URL or a protocol-relative one) points at a blocked host or
// URL. A path on the site itself is never blocked.
func (b *Blocklist) TargetBlocked(target string) bool {
	s := b.set()
	return s != nil && s.targetBlocked(target)
}

func (s *blockSet) targetBlocked(target string) bool {
	if len(s.targets) == 0 {
		return false
	}
	rest := target
	if i := strings.Index(rest, "://"); i >= 0 {
		rest = rest[i+3:]
	} else if r, ok := strings.CutPrefix(rest, "//"); ok {
		rest = r
	} else {
		return false // a path of the site
	}
	host, path := rest, ""
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		host, path = rest[:i], rest[i:]
	}
	if at := strings.LastIndexByte(host, '@'); at >= 0 {
		host = host[at+1:] // user info is not the host
	}
	if u, err := url.PathUnescape(host); err == nil {
		host = u
	}
	host, _ = targetHost(host)
	for _, p := range s.targets {
		if p.matches(host, path) {
			return true
		}
	}
	return false
}

// CheckRedirects refuses, with a *BlockedTargetError, the first rule of
// the site's _redirects (in files) that points at a blocked target.
func (b *Blocklist) CheckRedirects(files []File) error {
	s := b.set()
	if s == nil || len(s.targets) == 0 {
		return nil
	}
	for _, f := range files {
		if f.Path != rules.RedirectsFile {
			continue
		}
		rs, _ := rules.ParseRedirectsN(f.Data, MaxRuleLimit().Rules+1)
		for _, r := range rs {
			if s.targetBlocked(r.To) {
				return &BlockedTargetError{Line: r.Line, Target: r.To}
			}
		}
	}
	return nil
}

// CheckSignup refuses, with a *BlockedEmailDomainError, a new account
// for email (normalised) when its domain, or one it is under, is blocked.
func (b *Blocklist) CheckSignup(email string) error {
	s := b.set()
	if s == nil || len(s.domains) == 0 {
		return nil
	}
	_, d, ok := strings.Cut(email, "@")
	if !ok {
		return nil
	}
	d = strings.ToLower(d)
	for cur := d; cur != ""; {
		if s.domains[cur] {
			return &BlockedEmailDomainError{Domain: d}
		}
		_, next, ok := strings.Cut(cur, ".")
		if !ok {
			break
		}
		cur = next
	}
	return nil
}

// List returns the blocks of kind ("" for all), newest first.
func (b *Blocklist) List(kind string) ([]*Block, error) {
	q := b.app.RecordQuery(BlocklistCollection).OrderBy(FieldBlockCreated+" DESC", "rowid DESC")
	if kind != "" {
		if !validKind(kind) {
			return nil, &FieldError{Field: "kind", Msg: "kind must be one of " + strings.Join(BlockKinds, ", ")}
		}
		q = q.AndWhere(dbx.HashExp{FieldBlockKind: kind})
	}
	var recs []*core.Record
	if err := q.All(&recs); err != nil {
		return nil, fmt.Errorf("list blocklist: %w", err)
	}
	out := make([]*Block, len(recs))
	for i, r := range recs {
		out[i] = BlockOf(r)
	}
	return out, nil
}

// validKind tells a kind of block.
func validKind(kind string) bool {
	for _, k := range BlockKinds {
		if k == kind {
			return true
		}
	}
	return false
}

// Add blocks value of kind, with a note, as the superuser by (nil:
// unknown). A value blocked already is ErrAlreadyBlocked; a malformed one
// a *FieldError. The record hooks normalise and check it again, so the
// dashboard meets the same rules.
func (b *Blocklist) Add(ctx context.Context, kind, value, note string, by *core.Record) (*Block, error) {
	v, err := NormalizeBlock(kind, value)
	if err != nil {
		return nil, err
	}
	if len(note) > MaxBlockNote {
		return nil, &FieldError{Field: "note", Msg: fmt.Sprintf("note is too long: at most %d bytes", MaxBlockNote)}
	}
	col, err := b.app.FindCachedCollectionByNameOrId(BlocklistCollection)
	if err != nil {
		return nil, fmt.Errorf("find blocklist collection: %w", err)
	}
	var out *Block
	err = b.app.RunInTransaction(func(tx core.App) error {
		if _, err := tx.FindFirstRecordByFilter(BlocklistCollection, "kind = {:k} && value = {:v}", dbx.Params{"k": kind, "v": v}); err == nil {
			return ErrAlreadyBlocked
		}
		rec := core.NewRecord(col)
		rec.Set(FieldBlockKind, kind)
		rec.Set(FieldBlockValue, v)
		rec.Set(FieldBlockNote, note)
		if by != nil && by.Collection().Name == core.CollectionNameSuperusers {
			rec.Set(FieldBlockCreatedBy, by.Email())
		}
		if err := tx.SaveWithContext(ctx, rec); err != nil {
			return fmt.Errorf("save block: %w", err)
		}
		out = BlockOf(rec)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// BlockSiteContent blocks the pages of dep's live version, the moderation
// page's "block the content": the sha256 of each HTML file as its deploy
// sent it (a redeploy of the same kit sends the same bytes), with note
// naming the site and the file. Only pages: a site's other files (a
// library, a font, an icon) are often shared with innocent sites. Pages
// blocked already are skipped; it returns the blocks it added.
func (b *Blocklist) BlockSiteContent(ctx context.Context, dep *core.Record, note string, by *core.Record) ([]*Block, error) {
	m, err := liveManifest(b.app, dep)
	if err != nil {
		return nil, err
	}
	paths := make([]string, 0, len(m))
	for p, e := range m {
		if IsHTML(e.Type) {
			paths = append(paths, p)
		}
	}
	sort.Strings(paths)
	slug := DeploymentOf(dep).Slug()
	var out []*Block
	for _, p := range paths {
		e := m[p]
		h := e.Hash
		if e.Source != "" {
			h = e.Source
		}
		n := strings.TrimSpace(note + " (" + slug + "/" + p + ")")
		if len(n) > MaxBlockNote {
			n = n[:MaxBlockNote]
		}
		blk, err := b.Add(ctx, BlockContentHash, h, n, by)
		if errors.Is(err, ErrAlreadyBlocked) {
			continue
		}
		if err != nil {
			return out, err
		}
		out = append(out, blk)
	}
	return out, nil
}

// Remove lifts the block with id (ErrBlockNotFound when there is none)
// and returns it.
func (b *Blocklist) Remove(ctx context.Context, id string) (*Block, error) {
	rec, err := b.app.FindRecordById(BlocklistCollection, id)
	if err != nil {
		return nil, ErrBlockNotFound
	}
	if err := b.app.DeleteWithContext(ctx, rec); err != nil {
		return nil, fmt.Errorf("remove block: %w", err)
	}
	return BlockOf(rec), nil
}

// NormalizeBlockRecord checks and normalises a blocklist record about to
// be saved (the record hooks call it for every writer): a *FieldError
// naming the field when it is not a block.
func NormalizeBlockRecord(rec *core.Record) error {
	b := BlockOf(rec)
	v, err := NormalizeBlock(b.Kind(), b.Value())
	if err != nil {
		return err
	}
	rec.Set(FieldBlockValue, v)
	return nil
}
