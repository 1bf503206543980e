package domains_test

import (
	"testing"

	"sitedrop/sites"
	"sitedrop/sites/domains"
)

// TestServiceDefaultLimits: a Config without limits gets the plans'
// defaults, the ones the server's flags show.
func TestServiceDefaultLimits(t *testing.T) {
	svc := domains.NewService(nil, domains.Config{})
	if got := svc.Limit(sites.PlanFree); got != domains.DefaultFreeLimit {
		t.Errorf("free limit %d, want %d", got, domains.DefaultFreeLimit)
	}
	if got := svc.Limit(sites.PlanPro); got != domains.DefaultProLimit {
		t.Errorf("pro limit %d, want %d", got, domains.DefaultProLimit)
	}
	svc = domains.NewService(nil, domains.Config{FreeLimit: 3, ProLimit: 4})
	if svc.Limit(sites.PlanFree) != 3 || svc.Limit(sites.PlanPro) != 4 {
		t.Error("set limits replaced by the defaults")
	}
}
