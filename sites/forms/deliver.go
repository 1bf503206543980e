package forms

import (
	"bytes"
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"sitedrop/sites"

	"github.com/pocketbase/dbx"
	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tools/types"
)

// Deliverer sends queued webhook deliveries. Zero fields take their
// defaults; set them before the first RunOnce or Run.
//
// Its senders are shared fairly and never left idle while a due delivery
// waits (work-conserving). A delivery's account is the owner of its
// deployment when it was queued, its receiver its account and URL. A
// sender that comes free goes to the account with due deliveries that
// holds the fewest senders, the one given a sender least recently among
// equals (round robin); inside that account, to the receiver with the
// fewest requests in flight, then the oldest due delivery. So an account
// alone in the queue uses every sender, even for a single slow receiver,
// but holds more than another waiting account only until a sender comes
// free: an account whose receivers never answer delays another account's
// due delivery by at most one request (one Timeout) behind the accounts
// that waited longer, and a dead receiver delays the other receivers of
// its own account the same way.
//
// Each receiver has a circuit breaker. When an attempt gets no answer
// (timeout, connection refused or cut, address refused by the guard) or
// a 5xx or 429 answer, the receiver is down for a window of
// Backoff(n), n counting its windows in a row (at least the attempts of
// the delivery that failed): every pending delivery to it, those queued
// later included, waits until the window ends, written to their
// next_attempt_at, so a restart keeps the window. Then one delivery at a
// time (the oldest, a probe) is attempted: if it fails the next window is
// twice as long, if the receiver answers (any status but 5xx and 429) it
// is up again and its backlog drains with every sender free, as before.
// So a dead receiver costs at most one attempt per window, whatever its
// backlog, plus the requests that were in flight when it went down, and
// deliveries that waited spend no attempts. After a restart, a receiver
// whose oldest due delivery last failed so is probed one at a time again.
// A test or redelivery an owner asked for (manual) does not wait for the
// window: queued since the receiver's last failure, it is the next probe
// at once (the owner may just have fixed the receiver), and if it fails
// too the window widens as for any probe.
//
// At most Senders requests are in flight;
// runs of one Deliverer (Run, RunOnce) share these bounds and never send
// one delivery twice at once. One Deliverer per database: it does not
// coordinate with others.
type Deliverer struct {
	// App is the database holding the queue.
	App core.App
	// Guard refuses non-public targets at connect time.
	Guard WebhookGuard
	// Timeout bounds each request (default 10s).
	Timeout time.Duration
	// Senders bounds the requests in flight at once (default 4).
	Senders int
	// MaxAttempts is how many attempts a delivery gets before it is
	// marked failed (default 8).
	MaxAttempts int
	// Backoff is the delay after the attempt-th failed attempt of a
	// delivery, and the n-th window in a row of a receiver that is down
	// (default 15s·2^(n-1), at most 1h).
	Backoff func(attempt int) time.Duration
	// Now is the clock (default time.Now).
	Now func() time.Time

	wake     chan struct{}
	wakeOnce sync.Once

	// fillMu lets one run at a time give out senders, so that what it
	// counted in flight can only shrink until it claims (see fill).
	fillMu sync.Mutex

	mu        sync.Mutex
	inFlight  int               // requests in flight, of every run
	held      map[string]int    // requests in flight per account
	receivers map[receiver]int  // requests in flight per receiver
	sending   map[string]bool   // deliveries in flight
	served    map[string]uint64 // the turn at which each account last got a sender
	turn      uint64
	breakers  map[receiver]*breaker // what is known of receivers' health
}

// breaker is what the Deliverer knows of one receiver's health (see
// Deliverer). failures counts its windows down in a row, 0 when it
// answered last; since is when that last changed, so that a request
// begun before then (in flight when the receiver went down) does not
// widen the window again. A receiver down with until passed is half open:
// one request at a time.
type breaker struct {
	failures int
	since    time.Time
	until    time.Time
}

// open reports whether r's deliveries must not be sent at now: its
// window has not ended, or its probe is in flight (inFlight requests).
func (b *breaker) open(now time.Time, inFlight int) bool {
	return b.failures > 0 && (now.Before(b.until) || inFlight > 0)
}

// probing reports whether the receiver is down with a request in flight:
// then not even a manual delivery may go.
func (b *breaker) probing(inFlight int) bool {
	return b.failures > 0 && inFlight > 0
}

// receiver is where a delivery goes: its URL, as one account's.
type receiver struct {
	account string
	url     string
}

// NewDeliverer returns a Deliverer over app's queue with the default
// timeout, senders, attempts and backoff.
func NewDeliverer(app core.App, guard WebhookGuard) *Deliverer {
	d := &Deliverer{App: app, Guard: guard}
	d.wakeChan()
	return d
}

func (d *Deliverer) wakeChan() chan struct{} {
	d.wakeOnce.Do(func() {
		if d.wake == nil {
			d.wake = make(chan struct{}, 1)
		}
	})
	return d.wake
}

func (d *Deliverer) now() time.Time {
	if d.Now != nil {
		return d.Now().UTC()
	}
	return time.Now().UTC()
}

func (d *Deliverer) timeout() time.Duration {
	if d.Timeout > 0 {
		return d.Timeout
	}
	return defaultTimeout
}

func (d *Deliverer) senders() int {
	if d.Senders > 0 {
		return d.Senders
	}
	return defaultSenders
}

func (d *Deliverer) maxAttempts() int {
	if d.MaxAttempts > 0 {
		return d.MaxAttempts
	}
	return defaultMaxAttempts
}

func (d *Deliverer) backoff(attempt int) time.Duration {
	if d.Backoff != nil {
		return d.Backoff(attempt)
	}
	return defaultBackoff(attempt)
}

// defaultBackoff is 15s·2^(attempt-1), at most 1h.
func defaultBackoff(attempt int) time.Duration {
	if attempt < 1 {
		attempt = 1
	}
	if attempt > 10 {
		return backoffMax
	}
	return min(backoffBase<<(attempt-1), backoffMax)
}

// Wake makes a running Run look for due deliveries now. It never blocks.
func (d *Deliverer) Wake() {
	select {
	case d.wakeChan() <- struct{}{}:
	default:
	}
}

// pass is what one Run or RunOnce knows of its own sending.
type pass struct {
	// once is RunOnce's: only deliveries due by cutoff, each at most once
	// (seen), and accounts with nothing left unseen are spent.
	once   bool
	cutoff time.Time
	seen   map[string]bool
	spent  map[string]bool
	// cool pauses, in Run, an account whose last delivery hit a database
	// error, so that the error is not retried in a tight loop.
	cool map[string]time.Time
	// running counts this pass's requests in flight; each one sends its
	// outcome on done (buffered for all of them: a sender never blocks).
	running int
	done    chan outcome
}

// outcome is how one delivery attempt ended.
type outcome struct {
	account string
	sent    bool
	err     error
}

func (d *Deliverer) newPass(once bool) *pass {
	return &pass{
		once: once, cutoff: d.now(), seen: map[string]bool{}, spent: map[string]bool{},
		cool: map[string]time.Time{}, done: make(chan outcome, d.senders()),
	}
}

// Run delivers until ctx is done: it gives free senders to due
// deliveries (see Deliverer) whenever a request ends, a Wake
// comes or the earliest pending delivery falls due (looking at least
// every 5s), and waits for its requests to end before it returns. Errors
// are logged.
func (d *Deliverer) Run(ctx context.Context) {
	client := d.Guard.HTTPClient(d.timeout())
	defer client.CloseIdleConnections()
	p := d.newPass(false)
	wake := d.wakeChan()
	for ctx.Err() == nil {
		next, err := d.fill(ctx, client, p)
		if err != nil && ctx.Err() == nil {
			d.App.Logger().Error("webhook deliveries", "error", err)
		}
		wait := runWaitMax
		if !next.IsZero() {
			wait = min(max(next.Sub(d.now()), runWaitMin), runWaitMax)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
		case <-wake:
		case <-t.C:
		case o := <-p.done:
			d.finished(p, o)
		}
		t.Stop()
	}
	for p.running > 0 {
		d.finished(p, <-p.done)
	}
}

// finished books the outcome of one of p's requests; in Run an error is
// logged and pauses its account.
func (d *Deliverer) finished(p *pass, o outcome) {
	p.running--
	if o.err != nil && !p.once {
		d.App.Logger().Error("webhook delivery", "account", o.account, "error", o.err)
		p.cool[o.account] = d.now().Add(runWaitMax)
	}
}

// RunOnce sends every delivery due now, sharing the senders between
// accounts and receivers as Run does (oldest due first within each
// receiver), and returns how many requests were made. Each delivery gets
// at most one attempt: a failed one is scheduled again after Backoff (or
// when its receiver's window ends, if later) or, at MaxAttempts, marked
// failed; deliveries held by their receiver's breaker wait, unless its
// probe is answered during the run. Database errors of single deliveries are
// collected and the rest still run. A delivery that another run is
// sending is left to that run, and so is what is due when other runs
// hold every sender: RunOnce does not wait for their requests. When ctx
// is done it stops; an attempt cut short by ctx is not counted.
func (d *Deliverer) RunOnce(ctx context.Context) (int, error) {
	client := d.Guard.HTTPClient(d.timeout())
	defer client.CloseIdleConnections()
	p := d.newPass(true)
	var (
		attempted int
		errs      []error
	)
	for {
		if ctx.Err() == nil {
			if _, err := d.fill(ctx, client, p); err != nil {
				errs = append(errs, err)
			}
		}
		if p.running == 0 {
			break
		}
		o := <-p.done
		d.finished(p, o)
		if o.sent {
			attempted++
		}
		if o.err != nil {
			errs = append(errs, o.err)
		}
	}
	return attempted, errors.Join(errs...)
}

// lane is an account's share of the queue: its earliest pending delivery.
type lane struct {
	account string
	due     time.Time
}

// fill gives free senders to due deliveries, one at a time, as Deliverer
// says: to the account holding the fewest senders (least recently served
// among equals), inside it to the receiver with the fewest requests in
// flight, and there to the oldest due delivery not in flight. It returns
// when the next account that it could not serve yet (not due, or
// cooling) may be served, zero if none.
func (d *Deliverer) fill(ctx context.Context, client *http.Client, p *pass) (time.Time, error) {
	// One fill at a time: between counting what is in flight (pick) and
	// claiming, other runs' requests can only end, never start, so the
	// bound of Senders and the choice made stay true.
	d.fillMu.Lock()
	defer d.fillMu.Unlock()
	now := d.now()
	if p.once {
		now = p.cutoff
	}
	lanes, err := d.lanes()
	if err != nil {
		return time.Time{}, err
	}
	var next time.Time
	later := func(t time.Time) {
		if next.IsZero() || t.Before(next) {
			next = t
		}
	}
	d.mu.Lock()
	pending := make(map[string]bool, len(lanes))
	var due []lane
	for _, l := range lanes {
		pending[l.account] = true
		if p.spent[l.account] {
			continue
		}
		if until, ok := p.cool[l.account]; ok && now.Before(until) {
			later(until)
			continue
		}
		delete(p.cool, l.account)
		if l.due.After(now) {
			later(l.due)
			continue
		}
		due = append(due, l)
	}
	for a := range d.served { // forget accounts with nothing queued: they start afresh
		if !pending[a] && d.held[a] == 0 {
			delete(d.served, a)
		}
	}
	for r, b := range d.breakers {
		switch {
		case b.failures > 0 && now.Before(b.until):
			if pending[r.account] {
				later(b.until) // the receiver's deliveries queued since it went down
			}
		case !pending[r.account] && d.receivers[r] == 0:
			delete(d.breakers, r) // nothing queued, window over: start afresh
		}
	}
	d.mu.Unlock()

	var errs []error
	for {
		i, c := d.pick(due, now)
		if i < 0 {
			break
		}
		account := due[i].account
		row, err := d.nextDue(account, now, p.seen, c)
		if err != nil || row.ID == "" {
			// Nothing more for this account in this fill: all its due
			// deliveries are seen (RunOnce), in flight or wait for their
			// receiver's window or probe. It is spent for RunOnce only
			// when none of its requests is in flight, since an answer
			// may close a breaker and free what waits.
			due = slices.Delete(due, i, i+1)
			if err != nil {
				errs = append(errs, err)
			} else if p.once && c.held == 0 {
				p.spent[account] = true
			}
			continue
		}
		r := receiver{account, row.URL}
		d.claim(r, row)
		if p.once {
			p.seen[row.ID] = true
		}
		p.running++
		go func() {
			sent, err := d.deliver(ctx, client, r, row.ID)
			d.release(r, row.ID)
			p.done <- outcome{account, sent, err}
		}()
	}
	return next, errors.Join(errs...)
}

// choice is what pick saw of the account it chose: its requests in
// flight (held), those of each of its busy receivers (by URL), the URLs
// of its receivers whose breaker is open (blocked, see breaker.open) and
// of those down with a request in flight (probing, a part of blocked),
// and the ids of every delivery in flight.
type choice struct {
	held    int
	busy    map[string]int
	blocked []any
	probing []any
	sending []any
}

// allowed is the condition a due delivery of the chosen account must
// meet for its receiver's breaker: the receiver is not blocked, or the
// delivery is manual, never attempted, and its receiver not probing.
func (c choice) allowed() dbx.Expression {
	if len(c.blocked) == 0 {
		return nil
	}
	return dbx.Or(dbx.NotIn(deliveryURL, c.blocked...),
		dbx.And(dbx.HashExp{deliveryManual: true, deliveryAttempts: 0}, dbx.NotIn(deliveryURL, c.probing...)))
}

// pick returns the index in due of the account the next free sender goes
// to (-1 when no sender is free or due is empty), with what it saw of
// that account at now.
func (d *Deliverer) pick(due []lane, now time.Time) (int, choice) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.inFlight >= d.senders() || len(due) == 0 {
		return -1, choice{}
	}
	best := 0
	for i := 1; i < len(due); i++ {
		a, b := due[i], due[best]
		if cmp.Or(cmp.Compare(d.held[a.account], d.held[b.account]), cmp.Compare(d.served[a.account], d.served[b.account]),
			a.due.Compare(b.due), strings.Compare(a.account, b.account)) < 0 {
			best = i
		}
	}
	account := due[best].account
	c := choice{held: d.held[account], busy: map[string]int{}, sending: make([]any, 0, len(d.sending))}
	for r, n := range d.receivers {
		if r.account == account {
			c.busy[r.url] = n
		}
	}
	for r, b := range d.breakers {
		if r.account == account && b.open(now, d.receivers[r]) {
			c.blocked = append(c.blocked, r.url)
			if b.probing(d.receivers[r]) {
				c.probing = append(c.probing, r.url)
			}
		}
	}
	for id := range d.sending {
		c.sending = append(c.sending, id)
	}
	return best, c
}

// claim takes a free sender for the delivery row to r, which then is its
// account's turn. The caller holds fillMu and saw a free sender in pick.
// A receiver this Deliverer knows nothing of yet whose delivery last got
// no answer, a 5xx or a 429 (sent before a restart) is taken as down
// with its window over: this delivery is its probe, the only request in
// flight to it until it ends.
func (d *Deliverer) claim(r receiver, row dueRow) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.held == nil {
		d.held, d.receivers, d.sending, d.served = map[string]int{}, map[receiver]int{}, map[string]bool{}, map[string]uint64{}
	}
	if d.breakers == nil {
		d.breakers = map[receiver]*breaker{}
	}
	if _, known := d.breakers[r]; !known && row.wentDown() {
		d.breakers[r] = &breaker{failures: row.Attempts}
	}
	id := row.ID
	d.inFlight++
	d.held[r.account]++
	d.receivers[r]++
	d.sending[id] = true
	d.turn++
	d.served[r.account] = d.turn
}

// release gives back the sender of the delivery id to r.
func (d *Deliverer) release(r receiver, id string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.inFlight--
	if d.held[r.account]--; d.held[r.account] <= 0 {
		delete(d.held, r.account)
	}
	if d.receivers[r]--; d.receivers[r] <= 0 {
		delete(d.receivers, r)
	}
	delete(d.sending, id)
}

// lanes lists the accounts with pending deliveries, each with the time
// its earliest one is due.
func (d *Deliverer) lanes() ([]lane, error) {
	var rows []struct {
		Account string `db:"account"`
		Due     string `db:"due"`
	}
	err := d.App.DB().Select(deliveryAccount+" AS account", "MIN("+deliveryNextAttemptAt+") AS due").From(DeliveriesCollection).
		Where(dbx.HashExp{deliveryStatus: DeliveryPending}).GroupBy(deliveryAccount).All(&rows)
	if err != nil {
		return nil, fmt.Errorf("find accounts with pending webhook deliveries: %w", err)
	}
	out := make([]lane, 0, len(rows))
	for _, r := range rows {
		due, err := types.ParseDateTime(r.Due)
		if err != nil {
			return nil, fmt.Errorf("pending webhook deliveries of account %q: due %q: %w", r.Account, r.Due, err)
		}
		out = append(out, lane{r.Account, due.Time()}) // never set: due at once
	}
	return out, nil
}

// dueRow is a due delivery as nextDue finds it.
type dueRow struct {
	ID         string `db:"id"`
	URL        string `db:"url"`
	Attempts   int    `db:"attempts"`
	LastStatus int    `db:"last_status"`
	LastError  string `db:"last_error"`
}

// wentDown reports whether the row's last attempt found its receiver
// down: no answer, a 5xx or a 429.
func (r dueRow) wentDown() bool {
	return r.Attempts > 0 && (receiverDown(r.LastStatus) ||
		r.LastStatus == 0 && strings.HasPrefix(r.LastError, requestFailed))
}

// receiverDown reports whether an answer's status counts as its receiver
// being down for its breaker: a 5xx or 429.
func receiverDown(status int) bool {
	return status >= 500 || status == http.StatusTooManyRequests
}

// nextDue returns account's delivery due at now that the next sender
// goes to (ID "" if there is none): not in seen nor c.sending (ids in
// flight), allowed by its receiver's breaker (c.allowed), to the
// receiver with the fewest requests in flight (c.busy counts them by URL;
// any other URL has none), oldest due first. That is one query for the idle receivers, then
// one per count in flight (at most Senders).
func (d *Deliverer) nextDue(account string, now time.Time, seen map[string]bool, c choice) (dueRow, error) {
	urls := make([]any, 0, len(c.busy))
	var counts []int
	for u, n := range c.busy {
		urls = append(urls, u)
		counts = append(counts, n)
	}
	slices.Sort(counts)
	row, err := d.oldestDue(account, now, seen, c, dbx.NotIn(deliveryURL, urls...))
	if row.ID != "" || err != nil {
		return row, err
	}
	for _, n := range slices.Compact(counts) {
		var level []any
		for u, k := range c.busy {
			if k == n {
				level = append(level, u)
			}
		}
		if row, err = d.oldestDue(account, now, seen, c, dbx.In(deliveryURL, level...)); row.ID != "" || err != nil {
			return row, err
		}
	}
	return dueRow{}, nil
}

// oldestDue returns account's oldest delivery due at now that matches
// where, is neither in seen nor c.sending and is allowed by its
// receiver's breaker (c.allowed), or an empty row.
func (d *Deliverer) oldestDue(account string, now time.Time, seen map[string]bool, c choice,
	where dbx.Expression) (dueRow, error) {
	for offset := int64(0); ; offset += deliveryBatch {
		var rows []dueRow
		err := d.App.DB().Select("id", deliveryURL+" AS url", deliveryAttempts+" AS attempts",
			deliveryLastStatus+" AS last_status", deliveryLastError+" AS last_error").From(DeliveriesCollection).
			Where(dbx.HashExp{deliveryStatus: DeliveryPending, deliveryAccount: account}).
			AndWhere(dbx.NewExp("[["+deliveryNextAttemptAt+"]] <= {:now}", dbx.Params{"now": sites.DBTime(now)})).
			AndWhere(dbx.NotIn("id", c.sending...)).AndWhere(c.allowed()).AndWhere(where).
			OrderBy(deliveryNextAttemptAt, deliveryCreated, "id").Limit(deliveryBatch).Offset(offset).All(&rows)
		if err != nil {
			return dueRow{}, fmt.Errorf("find due webhook deliveries of account %q: %w", account, err)
		}
		for _, r := range rows {
			if !seen[r.ID] {
				return r, nil
			}
		}
		if len(rows) < deliveryBatch {
			return dueRow{}, nil
		}
	}
}

// deliver makes one attempt at the delivery id to r and records its
// outcome, and r's breaker's (see Deliverer). sent reports whether a
// request was made (and its outcome recorded).
func (d *Deliverer) deliver(ctx context.Context, client *http.Client, r receiver, id string) (sent bool, err error) {
	rec, err := findDelivery(d.App, id)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil // deleted meanwhile, with its deployment or webhook
	}
	if err != nil {
		return false, fmt.Errorf("read delivery %s: %w", id, err)
	}
	if rec.Status() != DeliveryPending {
		return false, nil
	}
	if next := rec.NextAttemptAt(); !next.IsZero() && next.After(d.now()) {
		return false, nil // postponed meanwhile, by its receiver's breaker
	}
	if reason, err := d.webhookGone(rec); err != nil {
		return false, err
	} else if reason != "" {
		rec.SetStatus(DeliveryFailed)
		rec.SetLastError(reason)
		if err := d.App.Save(rec); err != nil {
			return false, fmt.Errorf("save delivery %s: %w", id, err)
		}
		return false, nil
	}

	now := d.now()
	status, answered, sendErr := d.send(ctx, client, rec, now)
	if sendErr != nil && ctx.Err() != nil {
		return false, nil // shutting down: not the target's fault, retried later
	}
	end := d.now()
	attempts := rec.Attempts() + 1

	// The receiver's breaker: down opens or widens its window (hold),
	// an answer closes it, and what its window held is due again (pull).
	var hold, pull time.Time
	var unsent *noRequestError
	switch {
	case answered && sendErr != nil && receiverDown(status), !answered && !errors.As(sendErr, &unsent):
		hold = d.trip(r, now, end, attempts)
	case answered:
		pull = d.reset(r, end)
	}

	// Record the outcome on a fresh copy: a cascade may have removed the
	// row or unset its webhook while the request was in flight, or the
	// backlog cap dropped it.
	err = d.App.RunInTransaction(func(tx core.App) error {
		if err := d.record(tx, id, status, sendErr, now, hold); err != nil {
			return err
		}
		return d.moveBacklog(tx, r, id, end, hold, pull)
	})
	return true, err
}

// record saves the outcome of an attempt at the delivery id begun at now:
// the answer's status (0: none) and sendErr (nil: delivered). A failed
// attempt is due again after Backoff, or at hold if later (its receiver's
// window), or failed for good after MaxAttempts. A delivery no longer
// pending (dropped by the backlog cap while in flight) keeps its status
// and reason unless it was delivered. One gone meanwhile is left gone.
func (d *Deliverer) record(tx core.App, id string, status int, sendErr error, now, hold time.Time) error {
	rec, err := findDelivery(tx, id)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read delivery %s: %w", id, err)
	}
	attempts := rec.Attempts() + 1
	rec.SetAttempts(attempts)
	rec.SetLastStatus(status)
	pending := rec.Status() == DeliveryPending
	switch {
	case sendErr == nil:
		rec.SetStatus(DeliveryDelivered)
		rec.SetLastError("")
	case !pending:
	case attempts >= d.maxAttempts():
		rec.SetLastError(truncateRunes(sendErr.Error(), maxLastError))
		rec.SetStatus(DeliveryFailed)
		d.App.Logger().Warn("webhook delivery failed for good", "delivery", id, "webhook", rec.WebhookID(),
			"attempts", attempts, "error", sendErr)
	default:
		rec.SetLastError(truncateRunes(sendErr.Error(), maxLastError))
		next := now.Add(d.backoff(attempts))
		if hold.After(next) {
			next = hold
		}
		rec.SetNextAttemptAt(next)
	}
	if err := tx.Save(rec); err != nil {
		return fmt.Errorf("save delivery %s: %w", id, err)
	}
	return nil
}

// trip books that an attempt at r begun at start found it down at end,
// the attempts-th attempt of its delivery, and returns when r's window
// ends. A first failure, or one of a request begun after r's last change
// (the probe), opens a new window of Backoff(n), n one more than the
// windows before it and at least attempts; one begun earlier (in flight
// when r went down) leaves the window as it is.
func (d *Deliverer) trip(r receiver, start, end time.Time, attempts int) time.Time {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.breakers == nil {
		d.breakers = map[receiver]*breaker{}
	}
	b := d.breakers[r]
	if b == nil {
		b = &breaker{}
		d.breakers[r] = b
	}
	if b.failures == 0 || start.After(b.since) {
		b.failures = max(b.failures+1, attempts)
		b.since = end
		b.until = end.Add(d.backoff(b.failures))
	}
	return b.until
}

// reset books that r answered at end: it is up. It returns the end of
// the window r was down for if that is still to come (its deliveries
// that the window held are due now), else zero.
func (d *Deliverer) reset(r receiver, end time.Time) time.Time {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.breakers == nil {
		d.breakers = map[receiver]*breaker{}
	}
	var pull time.Time
	if b := d.breakers[r]; b != nil && b.failures > 0 && b.until.After(end) {
		pull = b.until
	}
	d.breakers[r] = &breaker{since: end} // known up: never taken as down from old rows
	return pull
}

// moveBacklog writes r's breaker to its other pending deliveries (not
// id): with hold set, those due before it wait until hold; with pull set
// (r answered before its window ended), those the window held, due after
// now and by pull, are due at now.
func (d *Deliverer) moveBacklog(tx core.App, r receiver, id string, now, hold, pull time.Time) error {
	var (
		to   time.Time
		when dbx.Expression
	)
	switch {
	case !hold.IsZero():
		to = hold
		when = dbx.NewExp("[["+deliveryNextAttemptAt+"]] < {:hold}", dbx.Params{"hold": sites.DBTime(hold)})
	case !pull.IsZero():
		to = now
		when = dbx.NewExp("[["+deliveryNextAttemptAt+"]] > {:now} AND [["+deliveryNextAttemptAt+"]] <= {:pull}",
			dbx.Params{"now": sites.DBTime(now), "pull": sites.DBTime(pull)})
	default:
		return nil
	}
	_, err := tx.DB().Update(DeliveriesCollection, dbx.Params{deliveryNextAttemptAt: sites.DBTime(to)},
		dbx.And(dbx.HashExp{deliveryStatus: DeliveryPending, deliveryAccount: r.account, deliveryURL: r.url},
			dbx.Not(dbx.HashExp{"id": id}), when)).Execute()
	if err != nil {
		return fmt.Errorf("reschedule the webhook deliveries to %s: %w", r.url, err)
	}
	return nil
}

// webhookGone returns why a delivery must not be sent because its webhook
// was deleted or deactivated since it was queued, or "". A
// deployment.deleted delivery is sent regardless: its webhook goes with
// the deployment.
func (d *Deliverer) webhookGone(rec *Delivery) (string, error) {
	if rec.Event() == EventDeploymentDeleted {
		return "", nil
	}
	hookID := rec.WebhookID()
	if hookID == "" {
		return "webhook was deleted", nil
	}
	hook := &Webhook{}
	err := d.App.RecordQuery(WebhooksCollection).AndWhere(dbx.HashExp{"id": hookID}).Limit(1).One(hook)
	if errors.Is(err, sql.ErrNoRows) {
		return "webhook was deleted", nil
	}
	if err != nil {
		return "", fmt.Errorf("read webhook %s: %w", hookID, err)
	}
	if !hook.Active() {
		return "webhook is inactive", nil
	}
	return "", nil
}

// noRequestError is the reason of a failed attempt that made no request:
// the delivery itself is at fault, not its receiver.
type noRequestError struct{ err error }

func (e *noRequestError) Error() string { return e.err.Error() }
func (e *noRequestError) Unwrap() error { return e.err }

// requestFailed starts the reason of an attempt that got no answer.
const requestFailed = "request failed:"

// send POSTs the delivery and returns the answer's status (0 without an
// answer), whether an answer came, and nil for a 2xx, else the reason it
// failed: a *noRequestError if no request was made.
func (d *Deliverer) send(ctx context.Context, client *http.Client, rec *Delivery, now time.Time) (int, bool, error) {
	body := []byte(rec.Payload())
	if rec.Type() != WebhookSlack {
		var err error
		if body, err = addSentAt(body, now); err != nil {
			return 0, false, &noRequestError{err}
		}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, rec.URL(), bytes.NewReader(body))
	if err != nil {
		return 0, false, &noRequestError{fmt.Errorf("build request: %w", err)}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", webhookUserAgent)
	req.Header.Set(HeaderWebhookEvent, rec.Event())
	req.Header.Set(HeaderWebhookDelivery, rec.Id)
	req.Header.Set(HeaderWebhookSignature, SignWebhook(rec.Secret(), body))

	resp, err := client.Do(req)
	if err != nil {
		// Drop the URL (up to 2 KiB, and in the row already) so the
		// cause fits in last_error.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return 0, false, fmt.Errorf(requestFailed+" %w", err)
	}
	defer resp.Body.Close()
	answer, readErr := io.ReadAll(io.LimitReader(resp.Body, maxResponseRead))
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return resp.StatusCode, true, nil
	}
	msg := fmt.Sprintf("HTTP %d", resp.StatusCode)
	if snippet := oneLine(string(answer)); snippet != "" && readErr == nil && utf8.ValidString(snippet) {
		msg += ": " + truncateRunes(snippet, 200)
	}
	return resp.StatusCode, true, errors.New(msg)
}

// addSentAt appends "sent_at" (RFC 3339, UTC) as the last field of the
// stored JSON object payload.
func addSentAt(payload []byte, now time.Time) ([]byte, error) {
	p := bytes.TrimSpace(payload)
	if len(p) < 2 || p[0] != '{' || p[len(p)-1] != '}' || !json.Valid(p) {
		return nil, errors.New("stored payload is not a JSON object")
	}
	stamp, _ := json.Marshal(now.UTC().Format(time.RFC3339))
	out := make([]byte, 0, len(p)+len(stamp)+12)
	out = append(out, p[:len(p)-1]...)
	if len(bytes.TrimSpace(p[1:len(p)-1])) > 0 {
		out = append(out, ',')
	}
	out = append(out, `"sent_at":`...)
	out = append(out, stamp...)
	return append(out, '}'), nil
}
