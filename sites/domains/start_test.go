package domains_test

import (
	"errors"
	"testing"
	"time"

	"sitedrop/sites/domains"
	"sitedrop/sites/ratelimit"
)

// TestServiceStart: an action counts against the account's limit; one
// that checks DNS reserves from the server's budget too. Over the
// account's limit, or with the budget spent, the refusal is a
// *ratelimit.Error with a Retry-After, and the action is not counted.
func TestServiceStart(t *testing.T) {
	svc := domains.NewService(nil, domains.Config{})
	actions := ratelimit.New(2, time.Minute)

	if a, err := svc.Start(actions, "acct", false); a != nil || err != nil {
		t.Fatalf("an action without DNS: %v, %v; want no allowance, no error", a, err)
	}
	// spend the budget but one check's worth
	now := time.Now()
	for range domains.DNSQuestionsPerMinute/domains.DNSQuestionsPerCheck - 1 {
		if _, err := svc.Reserve(now); err != nil {
			t.Fatal(err)
		}
	}
	a, err := svc.Start(actions, "acct", true)
	if err != nil || a == nil {
		t.Fatalf("a check within the budget: %v, %v", a, err)
	}
	var re *ratelimit.Error
	if _, err := svc.Start(actions, "other", true); !errors.As(err, &re) || re.RetryAfter <= 0 {
		t.Fatalf("the budget spent: %v, want a *ratelimit.Error with a Retry-After", err)
	}
	if err := actions.Check("other"); err != nil { // the refused check was not counted
		t.Fatalf("the refused check counted: %v", err)
	}
	if _, err := svc.Start(actions, "acct", false); !errors.As(err, &re) {
		t.Fatalf("over the account's limit: %v, want a *ratelimit.Error", err)
	}
}
