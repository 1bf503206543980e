package sites

import (
	"errors"
	"testing"
	"time"
)

// TestAnonOverridesApply: each empty field leaves the flag's value, each
// set one replaces it, and a value out of bounds is a *FieldError naming
// its field, leaving the defaults.
func TestAnonOverridesApply(t *testing.T) {
	d := AnonPolicy{Enabled: true, TTL: 24 * time.Hour, DeploysPerHour: 10, StoragePerIP: 100 << 20}
	for _, c := range []struct {
		name  string
		o     AnonOverrides
		want  AnonPolicy
		field string // "" when valid
	}{
		{"none", AnonOverrides{}, d, ""},
		{"off", AnonOverrides{Deploys: SettingOff}, AnonPolicy{TTL: d.TTL, DeploysPerHour: 10, StoragePerIP: d.StoragePerIP}, ""},
		{"on over off", AnonOverrides{Deploys: SettingOn}, d, ""},
		{"hold", AnonOverrides{HoldUntilClaimed: SettingOn}, AnonPolicy{Enabled: true, TTL: d.TTL, DeploysPerHour: 10, StoragePerIP: d.StoragePerIP, HoldUntilClaimed: true}, ""},
		{"ttl", AnonOverrides{TTL: " 90m "}, AnonPolicy{Enabled: true, TTL: 90 * time.Minute, DeploysPerHour: 10, StoragePerIP: d.StoragePerIP}, ""},
		{"no rate limit", AnonOverrides{DeploysPerHour: -1}, AnonPolicy{Enabled: true, TTL: d.TTL, DeploysPerHour: -1, StoragePerIP: d.StoragePerIP}, ""},
		{"storage", AnonOverrides{StoragePerIP: "20MiB"}, AnonPolicy{Enabled: true, TTL: d.TTL, DeploysPerHour: 10, StoragePerIP: 20 << 20}, ""},
		{"ttl not a duration", AnonOverrides{TTL: "tomorrow"}, d, FieldSettingsAnonTTL},
		{"ttl too short", AnonOverrides{TTL: "59s"}, d, FieldSettingsAnonTTL},
		{"ttl too long", AnonOverrides{TTL: "9000h"}, d, FieldSettingsAnonTTL},
		{"rate below -1", AnonOverrides{DeploysPerHour: -5}, d, FieldSettingsAnonDeploysPerHour},
		{"rate too high", AnonOverrides{DeploysPerHour: MaxAnonDeploysPerHour + 1}, d, FieldSettingsAnonDeploysPerHour},
		{"storage zero", AnonOverrides{StoragePerIP: "0B"}, d, FieldSettingsAnonStoragePerIP},
		{"storage not a size", AnonOverrides{StoragePerIP: "big"}, d, FieldSettingsAnonStoragePerIP},
		{"on/off typo", AnonOverrides{HoldUntilClaimed: "yes"}, d, FieldSettingsAnonHold},
	} {
		got, err := c.o.Apply(d)
		var fe *FieldError
		switch {
		case c.field == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.field != "" && (!errors.As(err, &fe) || fe.Field != c.field):
			t.Errorf("%s: error %v, want one naming %s", c.name, err, c.field)
		case got != c.want:
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}
