package domains

import (
	"time"

	"github.com/pocketbase/pocketbase/core"

	"sitedrop/sites"
	"sitedrop/sites/accounts"
)

// The fields of the domains collection: the only place their names are
// written (PocketBase's core/otp_model.go idiom).
const (
	fieldDomain     = "domain"
	fieldDeployment = "deployment"
	fieldStatus     = "status"
	fieldReason     = "reason"
	fieldToken      = "token"
	fieldAttempts   = "attempts"
	fieldSince      = "since"
	fieldChecked    = "checked"
	fieldVerified   = "verified"
	fieldCreated    = "created"
)

var _ core.RecordProxy = (*Domain)(nil)

// Domain is one claim of a custom domain by a deployment: a record of the
// domains collection, read and written through its typed accessors.
type Domain struct {
	core.BaseRecordProxy
}

// newDomain is a blank claim of the domains collection.
func newDomain(col *core.Collection) *Domain {
	d := &Domain{}
	d.SetProxyRecord(core.NewRecord(col))
	return d
}

// asDomain wraps a record of the domains collection.
func asDomain(rec *core.Record) *Domain {
	d := &Domain{}
	d.SetProxyRecord(rec)
	return d
}

// asDomains wraps records of the domains collection.
func asDomains(recs []*core.Record) []*Domain {
	out := make([]*Domain, len(recs))
	for i, r := range recs {
		out[i] = asDomain(r)
	}
	return out
}

// Name is the domain claimed, normalised (see Normalize).
func (d *Domain) Name() string { return d.GetString(fieldDomain) }

// SetName sets the domain claimed.
func (d *Domain) SetName(name string) { d.Set(fieldDomain, name) }

// DeploymentID is the id of the deployment that claims the domain.
func (d *Domain) DeploymentID() string { return d.GetString(fieldDeployment) }

// SetDeploymentID sets the deployment that claims the domain.
func (d *Domain) SetDeploymentID(id string) { d.Set(fieldDeployment, id) }

// Status is StatusPending, StatusVerified or StatusFailed.
func (d *Domain) Status() string { return d.GetString(fieldStatus) }

// SetStatus sets the claim's status.
func (d *Domain) SetStatus(s string) { d.Set(fieldStatus, s) }

// Reason says, for people, why the last check failed ("" when none did).
func (d *Domain) Reason() string { return d.GetString(fieldReason) }

// SetReason sets why the last check failed.
func (d *Domain) SetReason(r string) { d.Set(fieldReason, r) }

// Token is the value the domain's TXT record must hold.
func (d *Domain) Token() string { return d.GetString(fieldToken) }

// SetToken sets the value the TXT record must hold.
func (d *Domain) SetToken(t string) { d.Set(fieldToken, t) }

// Attempts counts the checks since the claim (or its last reset).
func (d *Domain) Attempts() int { return d.GetInt(fieldAttempts) }

// SetAttempts sets the count of checks.
func (d *Domain) SetAttempts(n int) { d.Set(fieldAttempts, n) }

// Since is when the claim (or its last reset) started; zero for claims
// older than the field.
func (d *Domain) Since() time.Time { return d.GetDateTime(fieldSince).Time() }

// SetSince sets when the claim started.
func (d *Domain) SetSince(t time.Time) { d.Set(fieldSince, t) }

// Checked is when the claim was last checked; zero when never.
func (d *Domain) Checked() time.Time { return d.GetDateTime(fieldChecked).Time() }

// SetChecked sets when the claim was last checked.
func (d *Domain) SetChecked(t time.Time) { d.Set(fieldChecked, t) }

// clearChecked forgets the last check: the claim is due at once.
func (d *Domain) clearChecked() { d.Set(fieldChecked, "") }

// Verified is when the claim was verified; zero when it is not.
func (d *Domain) Verified() time.Time { return d.GetDateTime(fieldVerified).Time() }

// SetVerified sets when the claim was verified.
func (d *Domain) SetVerified(t time.Time) { d.Set(fieldVerified, t) }

// Created is when the claim was first saved.
func (d *Domain) Created() time.Time { return d.GetDateTime(fieldCreated).Time() }

// DeploymentIDOf is the id of the deployment that claims rec, a record of
// the domains collection.
func DeploymentIDOf(rec *core.Record) string { return asDomain(rec).DeploymentID() }

// NamesOf returns the domains a saved or deleted record of the domains
// collection stood for: its domain and, when an update changed it, the
// one before (for the hooks that drop what a released domain had).
func NamesOf(rec *core.Record) []string {
	d := asDomain(rec)
	names := []string{d.Name()}
	if orig := rec.Original(); orig != nil {
		if before := asDomain(orig).Name(); before != names[0] {
			names = append(names, before)
		}
	}
	return names
}

// NewlyVerified returns the domain of a record of the domains collection
// that its save (a create or an update) made verified, and true; false
// when the record is not verified or already was, under the same name.
func NewlyVerified(rec *core.Record) (string, bool) {
	d := asDomain(rec)
	if d.Status() != StatusVerified {
		return "", false
	}
	if orig := rec.Original(); orig != nil {
		before := asDomain(orig)
		if before.Status() == StatusVerified && before.Name() == d.Name() {
			return "", false
		}
	}
	return d.Name(), true
}

// Site is what a claim needs of its deployment.
type Site struct {
	// ID is the deployment's id, Slug its slug, OwnerID its owner's id
	// ("" for an anonymous deployment).
	ID, Slug, OwnerID string
}

// SiteOf reads a record of the deployments collection.
func SiteOf(dep *core.Record) Site {
	d := sites.DeploymentOf(dep)
	return Site{ID: d.Id, Slug: d.Slug(), OwnerID: d.OwnerID()}
}

// Account is what the plan limit needs of a user.
type Account struct {
	// ID is the user's id, Plan its plan ("" is the free plan).
	ID, Plan string
}

// AccountOf reads a record of the users collection.
func AccountOf(user *core.Record) Account {
	return Account{ID: user.Id, Plan: accounts.UserOf(user).Plan()}
}
