package sites

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pocketbase/pocketbase/core"
)

// The sitedrop settings record: one row of the sitedrop_settings
// collection, edited by an administrator in PocketBase's dashboard (or
// through InstanceSettings.SaveOverrides), whose fields override the server's
// flags for anonymous deploys while it runs, without a restart. An empty
// field (0 for the number) is the flag's value.
const (
	SettingsCollection = "sitedrop_settings"
	// FieldSettingsAnonDeploys turns anonymous deploys "on" or "off"
	// (--anon-deploys).
	FieldSettingsAnonDeploys = "anon_deploys"
	// FieldSettingsAnonTTL is how long an anonymous deployment lives, a
	// Go duration such as "2h" (--anon-ttl).
	FieldSettingsAnonTTL = "anon_ttl"
	// FieldSettingsAnonDeploysPerHour is the anonymous deploys allowed
	// per client IP and hour, -1 for no limit (--anon-deploys-per-hour).
	FieldSettingsAnonDeploysPerHour = "anon_deploys_per_hour"
	// FieldSettingsAnonStoragePerIP is the bytes anonymous deploys from
	// one client IP may store per TTL, such as "20MiB"
	// (--anon-storage-per-ip).
	FieldSettingsAnonStoragePerIP = "anon_storage_per_ip"
	// FieldSettingsAnonHold keeps new anonymous sites unserved until
	// claimed, "on" or "off" (--anon-hold-until-claimed).
	FieldSettingsAnonHold = "anon_hold_until_claimed"
)

// The values of the on/off fields; "" is the flag's.
const (
	SettingOn  = "on"
	SettingOff = "off"
)

// The bounds of the settings an administrator may set.
const (
	MinAnonTTL            = time.Minute
	MaxAnonTTL            = 365 * 24 * time.Hour
	MaxAnonDeploysPerHour = 1_000_000
)

// ErrAnonDeploysOff refuses an anonymous deploy while an administrator has
// turned them off.
var ErrAnonDeploysOff = errors.New("anonymous deploys are turned off on this server")

// ErrAwaitingClaim: the site is held unserved until an account claims it
// (AnonPolicy.HoldUntilClaimed), so its forms take no submissions.
var ErrAwaitingClaim = errors.New("site is awaiting its claim")

// AnonPolicy is the rules of anonymous deploys in force: the flags, with
// the settings record's overrides applied.
type AnonPolicy struct {
	// Enabled allows anonymous deploys.
	Enabled bool
	// TTL is how long an anonymous deployment lives unless claimed.
	TTL time.Duration
	// DeploysPerHour is the anonymous deploys allowed per client IP and
	// hour (< 0: no limit).
	DeploysPerHour int
	// StoragePerIP is the bytes anonymous deploys from one client IP may
	// store per TTL.
	StoragePerIP int64
	// HoldUntilClaimed keeps a new anonymous site unserved (its hosts
	// answer the "awaiting claim" page) until an account claims it.
	HoldUntilClaimed bool
}

// AnonOverrides is what the settings record sets, as it holds it: the
// zero value of each field leaves the flag's value.
type AnonOverrides struct {
	Deploys          string // "", SettingOn or SettingOff
	TTL              string // "" or a Go duration
	DeploysPerHour   int    // 0, -1 for no limit, or a limit
	StoragePerIP     string // "" or a size (ParseBytes)
	HoldUntilClaimed string // "", SettingOn or SettingOff
}

// AnonOverridesOf reads the overrides of a settings record.
func AnonOverridesOf(rec *core.Record) AnonOverrides {
	return AnonOverrides{
		Deploys:          rec.GetString(FieldSettingsAnonDeploys),
		TTL:              rec.GetString(FieldSettingsAnonTTL),
		DeploysPerHour:   rec.GetInt(FieldSettingsAnonDeploysPerHour),
		StoragePerIP:     rec.GetString(FieldSettingsAnonStoragePerIP),
		HoldUntilClaimed: rec.GetString(FieldSettingsAnonHold),
	}
}

// setOn writes o onto a settings record.
func (o AnonOverrides) setOn(rec *core.Record) {
	rec.Set(FieldSettingsAnonDeploys, o.Deploys)
	rec.Set(FieldSettingsAnonTTL, o.TTL)
	rec.Set(FieldSettingsAnonDeploysPerHour, o.DeploysPerHour)
	rec.Set(FieldSettingsAnonStoragePerIP, o.StoragePerIP)
	rec.Set(FieldSettingsAnonHold, o.HoldUntilClaimed)
}

// Apply is the policy of the defaults d (the flags) with o's overrides,
// or a *FieldError naming the first field that is not valid.
func (o AnonOverrides) Apply(d AnonPolicy) (AnonPolicy, error) {
	p := d
	var err error
	if p.Enabled, err = onOff(FieldSettingsAnonDeploys, o.Deploys, d.Enabled); err != nil {
		return d, err
	}
	if p.HoldUntilClaimed, err = onOff(FieldSettingsAnonHold, o.HoldUntilClaimed, d.HoldUntilClaimed); err != nil {
		return d, err
	}
	if s := strings.TrimSpace(o.TTL); s != "" {
		ttl, err := time.ParseDuration(s)
		if err != nil || ttl < MinAnonTTL || ttl > MaxAnonTTL {
			return d, &FieldError{Field: FieldSettingsAnonTTL, Msg: fmt.Sprintf(
				"%s must be a duration from %s to %s, such as 2h or 30m (empty: the --anon-ttl flag)", FieldSettingsAnonTTL, MinAnonTTL, MaxAnonTTL)}
		}
		p.TTL = ttl
	}
	switch n := o.DeploysPerHour; {
	case n < -1 || n > MaxAnonDeploysPerHour:
		return d, &FieldError{Field: FieldSettingsAnonDeploysPerHour, Msg: fmt.Sprintf(
			"%s must be from 1 to %d, -1 for no limit, or 0 for the --anon-deploys-per-hour flag", FieldSettingsAnonDeploysPerHour, MaxAnonDeploysPerHour)}
	case n != 0:
		p.DeploysPerHour = n
	}
	if s := strings.TrimSpace(o.StoragePerIP); s != "" {
		n, err := ParseBytes(s)
		if err != nil || n <= 0 {
			return d, &FieldError{Field: FieldSettingsAnonStoragePerIP, Msg: FieldSettingsAnonStoragePerIP +
				" must be a size above zero, such as 20MiB (empty: the --anon-storage-per-ip flag)"}
		}
		p.StoragePerIP = n
	}
	return p, nil
}

// onOff is an on/off field's value: def when empty.
func onOff(field, v string, def bool) (bool, error) {
	switch v {
	case "":
		return def, nil
	case SettingOn:
		return true, nil
	case SettingOff:
		return false, nil
	}
	return def, &FieldError{Field: field, Msg: field + ` must be "on", "off" or empty (the flag)`}
}

// InstanceSettings is the settings record's service: the anonymous deploys'
// policy read at each request from a copy kept in memory, which the
// record hooks reload when the record is saved or deleted (Reload), so
// that a change applies to the next request, without a restart.
type InstanceSettings struct {
	app      core.App
	defaults AnonPolicy
	// mu serializes the reloads, so that the last one read is the last
	// one kept and applied.
	mu      sync.Mutex
	cur     atomic.Pointer[AnonPolicy]
	changed []func(AnonPolicy)
}

// NewInstanceSettings is the settings of app, defaults being the flags' policy.
func NewInstanceSettings(app core.App, defaults AnonPolicy) *InstanceSettings {
	return &InstanceSettings{app: app, defaults: defaults}
}

// OnAnonChange has f called with every policy loaded from now on (the
// limiters that count with it): call it before the settings are in use.
func (s *InstanceSettings) OnAnonChange(f func(AnonPolicy)) {
	s.changed = append(s.changed, f)
}

// Anon is the anonymous deploys' policy in force. It is loaded on first
// use; if the record cannot be read, the flags' policy applies (and the
// next call tries again).
func (s *InstanceSettings) Anon() AnonPolicy {
	if p := s.cur.Load(); p != nil {
		return *p
	}
	p, err := s.Reload()
	if err != nil {
		s.app.Logger().Warn("sitedrop settings: using the flags", "error", err)
	}
	return p
}

// Reload reads the settings record again and keeps its policy (the
// flags' when there is no record), telling OnAnonChange's functions. A
// record that cannot be read or is not valid (saved past the record
// hooks) leaves the flags' policy, and an error.
func (s *InstanceSettings) Reload() (AnonPolicy, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, err := s.read()
	if err != nil {
		p = s.defaults
	}
	if err == nil {
		s.cur.Store(&p)
	}
	for _, f := range s.changed {
		f(p)
	}
	return p, err
}

// read is the policy of the settings record now.
func (s *InstanceSettings) read() (AnonPolicy, error) {
	rec, err := s.record()
	if err != nil {
		return s.defaults, err
	}
	if rec == nil {
		return s.defaults, nil
	}
	p, err := AnonOverridesOf(rec).Apply(s.defaults)
	if err != nil {
		return s.defaults, fmt.Errorf("settings record %s: %w", rec.Id, err)
	}
	return p, nil
}

// record is the settings record, nil when there is none.
func (s *InstanceSettings) record() (*core.Record, error) {
	recs, err := s.app.FindRecordsByFilter(SettingsCollection, "", "created", 1, 0)
	if err != nil {
		return nil, fmt.Errorf("read the sitedrop settings: %w", err)
	}
	if len(recs) == 0 {
		return nil, nil
	}
	return recs[0], nil
}

// Overrides are the overrides the settings record holds now (none
// without a record): what the moderation page shows.
func (s *InstanceSettings) Overrides() (AnonOverrides, error) {
	rec, err := s.record()
	if err != nil || rec == nil {
		return AnonOverrides{}, err
	}
	return AnonOverridesOf(rec), nil
}

// SaveOverrides saves o as the settings record (creating it if there is
// none), through the record hooks that check it and reload the policy:
// the moderation page's way to change the anonymous deploys' rules. A
// value that is not valid is a *FieldError and changes nothing.
func (s *InstanceSettings) SaveOverrides(ctx context.Context, o AnonOverrides) error {
	if _, err := o.Apply(s.defaults); err != nil {
		return err
	}
	rec, err := s.record()
	if err != nil {
		return err
	}
	if rec == nil {
		c, err := s.app.FindCachedCollectionByNameOrId(SettingsCollection)
		if err != nil {
			return fmt.Errorf("find %s: %w", SettingsCollection, err)
		}
		rec = core.NewRecord(c)
	}
	o.setOn(rec)
	if err := s.app.SaveWithContext(ctx, rec); err != nil {
		return fmt.Errorf("save the sitedrop settings: %w", err)
	}
	return nil
}

// CheckSettingsRecord checks a settings record about to be saved: its
// overrides valid (a *FieldError otherwise), and a new record the only
// one (ErrSettingsExists).
func CheckSettingsRecord(app core.App, rec *core.Record) error {
	if _, err := AnonOverridesOf(rec).Apply(AnonPolicy{}); err != nil {
		return err
	}
	if rec.IsNew() {
		n, err := app.CountRecords(SettingsCollection)
		if err != nil {
			return fmt.Errorf("count the sitedrop settings: %w", err)
		}
		if n > 0 {
			return ErrSettingsExists
		}
	}
	return nil
}

// ErrSettingsExists refuses a second settings record: there is one, to
// edit.
var ErrSettingsExists = errors.New("there is one sitedrop settings record: edit it instead of adding another")
