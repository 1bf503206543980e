package publish

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"sitedrop/sites/store/s3store"
)

// ChangesPath is the primary's route a replica started with --primary
// holds a long poll on: GET ChangesPath?after=<position>, with the
// replica token (TokenKey) as a Bearer, answered as soon as the change
// feed's position differs from after (see Changes).
const ChangesPath = "/api/replica/changes"

// TokenKey holds the secret a replica shows the primary to hold a long
// poll: random, written by the primary when absent (EnsureToken), read by
// the replicas from the same store. Delete it and restart the primary to
// change it; replicas read it again on a 401.
const TokenKey = SitesPrefix + "_replica_token"

// Defaults of ChangesConfig.
const (
	// DefaultMaxWaiters caps the long polls waiting at once; past it a
	// replica is refused (503) and keeps polling the store.
	DefaultMaxWaiters = 256
	// DefaultWaitTimeout is how long a long poll waits for a change before
	// it is answered with the same position (the replica asks again).
	DefaultWaitTimeout = 50 * time.Second
)

// maxToken bounds a token read from the store.
const maxToken = 256

// Position names where the change feed stands: its epoch and the number
// of its latest change. It travels as "<epoch>:<seq>"; the zero Position
// ("") is unknown.
type Position struct {
	Epoch string
	Seq   int64
}

// String is "<epoch>:<seq>", "" for the zero Position.
func (p Position) String() string {
	if p.Epoch == "" {
		return ""
	}
	return p.Epoch + ":" + strconv.FormatInt(p.Seq, 10)
}

// ParsePosition reads a Position's String ("" is the zero Position).
func ParsePosition(s string) (Position, error) {
	if s == "" {
		return Position{}, nil
	}
	epoch, seq, ok := strings.Cut(s, ":")
	if !ok || epoch == "" || len(epoch) > 64 || strings.IndexFunc(epoch, notEpochRune) >= 0 {
		return Position{}, fmt.Errorf("position %q: want <epoch>:<seq>", s)
	}
	n, err := strconv.ParseInt(seq, 10, 64)
	if err != nil || n < 0 {
		return Position{}, fmt.Errorf("position %q: want <epoch>:<seq>, seq a number", s)
	}
	return Position{Epoch: epoch, Seq: n}, nil
}

// notEpochRune reports a rune that no epoch holds (NewFeed's are hex).
func notEpochRune(r rune) bool {
	return !(r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r == '-' || r == '_')
}

// ChangesAnswer is the body of ChangesPath's 200: where the feed stands.
// It carries no change: the replica reads the feed from the store.
type ChangesAnswer struct {
	Position string `json:"position"`
}

// Errors of Changes.Wait.
var (
	// ErrBusy: MaxWaiters long polls are already waiting.
	ErrBusy = errors.New("too many replicas waiting")
	// ErrClosed: the primary is shutting down (Changes.Close).
	ErrClosed = errors.New("shutting down")
)

// ChangesConfig configures Changes.
type ChangesConfig struct {
	// Objects holds the replica token (TokenKey).
	Objects Objects
	// MaxWaiters caps the waiting long polls. Default DefaultMaxWaiters.
	MaxWaiters int
	// Timeout is how long a long poll waits. Default DefaultWaitTimeout.
	Timeout time.Duration
	Logger  *slog.Logger
}

// Changes is where the change feed stands, as the Publisher last wrote
// it (Set), and the replicas' long polls waiting for it to move: a
// broadcaster, and the handler of ChangesPath (ServeHTTP). A replica that
// holds one learns of a change one round trip after the feed is written,
// instead of at its next poll of the store.
type Changes struct {
	cfg ChangesConfig

	mu  sync.Mutex
	pos Position
	// moved is closed when pos moves (or at Close), then replaced.
	moved   chan struct{}
	waiting int
	closed  bool

	tokenMu sync.Mutex
	token   string // "" until read or written
}

// NewChanges returns a Changes at the unknown position.
func NewChanges(cfg ChangesConfig) *Changes {
	if cfg.MaxWaiters <= 0 {
		cfg.MaxWaiters = DefaultMaxWaiters
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultWaitTimeout
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Changes{cfg: cfg, moved: make(chan struct{})}
}

// Set records where the feed stands, just written, and answers the long
// polls waiting for another position.
func (c *Changes) Set(p Position) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if p == c.pos {
		return
	}
	c.pos = p
	close(c.moved)
	c.moved = make(chan struct{})
}

// Position is where the feed stands (zero before the first Set).
func (c *Changes) Position() Position {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.pos
}

// Close ends every wait (ErrClosed) and refuses new ones: at shutdown, so
// that long polls do not hold up the drain.
func (c *Changes) Close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	c.closed = true
	close(c.moved)
	c.moved = make(chan struct{})
}

// Wait returns where the feed stands as soon as that is known and differs
// from after, or after timeout (then the position as it is, maybe after
// itself). It returns ErrBusy when MaxWaiters are already waiting,
// ErrClosed once Close was called, and ctx's error when ctx ends first.
func (c *Changes) Wait(ctx context.Context, after Position, timeout time.Duration) (Position, error) {
	c.mu.Lock()
	switch {
	case c.closed:
		c.mu.Unlock()
		return Position{}, ErrClosed
	case c.pos.Epoch != "" && c.pos != after:
		p := c.pos
		c.mu.Unlock()
		return p, nil
	case c.waiting >= c.cfg.MaxWaiters:
		c.mu.Unlock()
		return Position{}, ErrBusy
	}
	c.waiting++
	moved := c.moved
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		c.waiting--
		c.mu.Unlock()
	}()
	t := time.NewTimer(timeout)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return Position{}, ctx.Err()
		case <-t.C:
			return c.Position(), nil
		case <-moved:
		}
		c.mu.Lock()
		p, closed := c.pos, c.closed
		moved = c.moved
		c.mu.Unlock()
		if closed {
			return Position{}, ErrClosed
		}
		if p.Epoch != "" && p != after {
			return p, nil
		}
	}
}

// ServeHTTP is ChangesPath: a replica's long poll. It needs the replica
// token as a Bearer (401 otherwise), takes ?after=<position> (400 for a
// malformed one) and answers a ChangesAnswer once the position differs
// from after, or after the wait timeout; 503 when too many replicas wait
// or the primary is shutting down (the replica polls the store then).
func (c *Changes) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	want, err := c.Token(r.Context())
	if err != nil {
		c.cfg.Logger.Error("replica changes: the replica token", "error", err)
		answerError(w, http.StatusServiceUnavailable, "The replica token is unavailable: poll the store")
		return
	}
	if !bearerIs(r, want) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="sitedrop replicas"`)
		answerError(w, http.StatusUnauthorized, "Unauthorized")
		return
	}
	after, err := ParsePosition(r.URL.Query().Get("after"))
	if err != nil {
		answerError(w, http.StatusBadRequest, "Invalid after: "+err.Error())
		return
	}
	p, err := c.Wait(r.Context(), after, c.cfg.Timeout)
	switch {
	case errors.Is(err, ErrBusy):
		w.Header().Set("Retry-After", "10")
		answerError(w, http.StatusServiceUnavailable, "Too many replicas waiting: poll the store")
		return
	case errors.Is(err, ErrClosed):
		answerError(w, http.StatusServiceUnavailable, "Shutting down: poll the store")
		return
	case err != nil:
		return // the replica went away
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(ChangesAnswer{Position: p.String()})
}

// bearerIs reports whether r's "Authorization: Bearer" token is want,
// compared in constant time.
func bearerIs(r *http.Request, want string) bool {
	scheme, tok, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(strings.TrimSpace(tok)), []byte(want)) == 1
}

// answerError writes {"error": msg} with status.
func answerError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]string{"error": msg})
}

// Token is the replica token, read from the store or written there when
// absent (EnsureToken) on first use, then kept.
func (c *Changes) Token(ctx context.Context) (string, error) {
	c.tokenMu.Lock()
	defer c.tokenMu.Unlock()
	if c.token == "" {
		tok, err := EnsureToken(ctx, c.cfg.Objects)
		if err != nil {
			return "", err
		}
		c.token = tok
	}
	return c.token, nil
}

// EnsureToken returns the replica token (TokenKey), writing a random one
// when there is none (a conditional create: two primaries agree on one).
func EnsureToken(ctx context.Context, objs Objects) (string, error) {
	for range maxConflicts {
		tok, err := ReadToken(ctx, objs)
		if !errors.Is(err, s3store.ErrNotFound) {
			return tok, err
		}
		var b [32]byte
		rand.Read(b[:])
		tok = hex.EncodeToString(b[:])
		_, err = objs.PutObject(ctx, TokenKey, []byte(tok), s3store.Condition{IfNoneMatch: true})
		if err == nil {
			return tok, nil
		}
		if !errors.Is(err, s3store.ErrPrecondition) {
			return "", fmt.Errorf("write the replica token: %w", err)
		}
	}
	return "", errors.New("write the replica token: it kept changing")
}

// ReadToken reads the replica token; an error wrapping
// s3store.ErrNotFound when there is none yet.
func ReadToken(ctx context.Context, objs Objects) (string, error) {
	data, _, err := objs.GetObject(ctx, TokenKey)
	if err != nil {
		return "", fmt.Errorf("read the replica token: %w", err)
	}
	tok := strings.TrimSpace(string(data))
	if tok == "" || len(tok) > maxToken || strings.ContainsFunc(tok, func(r rune) bool { return r <= ' ' || r > '~' }) {
		return "", fmt.Errorf("the replica token %s is not 1 to %d printable characters: delete it, the primary writes another", TokenKey, maxToken)
	}
	return tok, nil
}

// ReadChangesAnswer decodes a 200 of ChangesPath (at most 4 KiB).
func ReadChangesAnswer(body io.Reader) (Position, error) {
	var a ChangesAnswer
	if err := json.NewDecoder(io.LimitReader(body, 4<<10)).Decode(&a); err != nil {
		return Position{}, fmt.Errorf("read the primary's answer: %w", err)
	}
	return ParsePosition(a.Position)
}
