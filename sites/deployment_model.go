package sites

import (
	"time"

	"github.com/pocketbase/pocketbase/core"
)

// The fields of the deployments collection: the only place their names
// are written (PocketBase's core/otp_model.go idiom). The protection's
// fields are in protection.go.
const (
	FieldSlug           = "slug"
	FieldOwner          = "owner"
	FieldStatus         = "status"
	FieldStorageType    = "storage_type"
	FieldLiveVersion    = "live_version"
	FieldClaimTokenHash = "claim_token_hash"
	FieldExpiresAt      = "expires_at"
	FieldTitle          = "title"
	FieldDescription    = "description"
	FieldFavicon        = "favicon"
	FieldIsSPA          = "is_spa"
	FieldNotifyEmail    = "notify_email"
	FieldNotifiedUntil  = "notified_until"
	FieldLastMailAt     = "last_mail_at"
	FieldCreated        = "created"
	FieldUpdated        = "updated"
	// FieldPaused is set while the owner has paused the site (see
	// Service.SetPaused); status is the administrator's.
	FieldPaused = "paused"
	// FieldAwaitingClaim is set on an anonymous site deployed while the
	// settings keep them unserved until claimed (AnonPolicy.
	// HoldUntilClaimed): its hosts answer the "awaiting claim" page until
	// an account owns it.
	FieldAwaitingClaim = "awaiting_claim"
)

// The fields of the versions collection.
const (
	FieldVersionDeployment = "deployment"
	FieldVersionNumber     = "number"
	FieldVersionManifest   = "manifest"
	FieldVersionFileCount  = "file_count"
	FieldVersionTotalBytes = "total_bytes"
	// FieldVersionMessage is the deploy's message (MaxMessageLen runes).
	FieldVersionMessage = "message"
	FieldVersionCreated = "created"
	// The settings the version was deployed with (the deployment's
	// fields of the same names): what its preview serves, and what
	// promoting it makes the site's. See FollowLiveVersion.
	FieldVersionIsSPA       = "is_spa"
	FieldVersionTitle       = "title"
	FieldVersionDescription = "description"
	FieldVersionFavicon     = "favicon"
	FieldVersionStorageType = "storage_type"
)

// versionSettings are the fields a deployment and its live version hold
// alike (the same names in both collections).
var versionSettings = []string{FieldIsSPA, FieldTitle, FieldDescription, FieldFavicon, FieldStorageType}

// The fields of the aliases collection: a name of the deployment's that
// points at one of its versions (<name>--<slug>).
const (
	FieldAliasDeployment = "deployment"
	FieldAliasName       = "name"
	FieldAliasVersion    = "version"
)

var _ core.RecordProxy = (*Deployment)(nil)

// Deployment is one site: a record of the deployments collection, read
// and written through its typed accessors.
type Deployment struct {
	core.BaseRecordProxy
}

// DeploymentOf wraps rec, a record of the deployments collection (nil
// for nil).
func DeploymentOf(rec *core.Record) *Deployment {
	if rec == nil {
		return nil
	}
	d := &Deployment{}
	d.SetProxyRecord(rec)
	return d
}

// Original is the deployment as it was loaded, before unsaved changes
// (blank for a new one), as core.Record.Original.
func (d *Deployment) Original() *Deployment { return DeploymentOf(d.Record.Original()) }

// Slug is the deployment's name in its host.
func (d *Deployment) Slug() string { return d.GetString(FieldSlug) }

// SetSlug sets the deployment's name.
func (d *Deployment) SetSlug(s string) { d.Set(FieldSlug, s) }

// OwnerID is the owning account's id, "" for an anonymous deployment.
func (d *Deployment) OwnerID() string { return d.GetString(FieldOwner) }

// SetOwnerID sets the owning account.
func (d *Deployment) SetOwnerID(id string) { d.Set(FieldOwner, id) }

// Status is StatusActive or a disabled status.
func (d *Deployment) Status() string { return d.GetString(FieldStatus) }

// SetStatus sets the deployment's status.
func (d *Deployment) SetStatus(s string) { d.Set(FieldStatus, s) }

// StorageType is how the deployment's content was uploaded.
func (d *Deployment) StorageType() string { return d.GetString(FieldStorageType) }

// SetStorageType sets how the content was uploaded.
func (d *Deployment) SetStorageType(s string) { d.Set(FieldStorageType, s) }

// LiveVersion is the id of the version served, "" for none.
func (d *Deployment) LiveVersion() string { return d.GetString(FieldLiveVersion) }

// SetLiveVersion sets the version served.
func (d *Deployment) SetLiveVersion(id string) { d.Set(FieldLiveVersion, id) }

// ClaimTokenHash is the hash of an anonymous deployment's claim token.
func (d *Deployment) ClaimTokenHash() string { return d.GetString(FieldClaimTokenHash) }

// SetClaimTokenHash sets the hash of the claim token ("" for none).
func (d *Deployment) SetClaimTokenHash(h string) { d.Set(FieldClaimTokenHash, h) }

// ExpiresAt is when an anonymous deployment expires; zero when it does
// not.
func (d *Deployment) ExpiresAt() time.Time { return d.GetDateTime(FieldExpiresAt).Time() }

// SetExpiresAt sets the expiry; the zero time clears it.
func (d *Deployment) SetExpiresAt(t time.Time) {
	if t.IsZero() {
		d.Set(FieldExpiresAt, "")
		return
	}
	d.Set(FieldExpiresAt, t)
}

// Expired reports whether the deployment has passed its expiry at now.
func (d *Deployment) Expired(now time.Time) bool {
	exp := d.GetDateTime(FieldExpiresAt)
	return !exp.IsZero() && !exp.Time().After(now)
}

// Title is the site's title, from its HTML or its settings.
func (d *Deployment) Title() string { return d.GetString(FieldTitle) }

// SetTitle sets the site's title.
func (d *Deployment) SetTitle(s string) { d.Set(FieldTitle, s) }

// Description is the site's description.
func (d *Deployment) Description() string { return d.GetString(FieldDescription) }

// SetDescription sets the site's description.
func (d *Deployment) SetDescription(s string) { d.Set(FieldDescription, s) }

// Favicon is the path of the site's icon.
func (d *Deployment) Favicon() string { return d.GetString(FieldFavicon) }

// SetFavicon sets the path of the site's icon.
func (d *Deployment) SetFavicon(s string) { d.Set(FieldFavicon, s) }

// IsSPA reports whether unknown paths serve the index (a single-page app).
func (d *Deployment) IsSPA() bool { return d.GetBool(FieldIsSPA) }

// SetIsSPA sets whether unknown paths serve the index.
func (d *Deployment) SetIsSPA(on bool) { d.Set(FieldIsSPA, on) }

// Paused reports whether the owner has paused the site: its hosts answer
// the paused page and its forms take no submissions.
func (d *Deployment) Paused() bool { return d.GetBool(FieldPaused) }

// SetPaused pauses or resumes the site.
func (d *Deployment) SetPaused(on bool) { d.Set(FieldPaused, on) }

// AwaitingClaim reports whether the site is held unserved until an
// account claims it.
func (d *Deployment) AwaitingClaim() bool { return d.GetBool(FieldAwaitingClaim) }

// SetAwaitingClaim holds the site unserved until claimed (on), or serves
// it.
func (d *Deployment) SetAwaitingClaim(on bool) { d.Set(FieldAwaitingClaim, on) }

// NotifyEmail reports whether the owner is mailed about new submissions.
func (d *Deployment) NotifyEmail() bool { return d.GetBool(FieldNotifyEmail) }

// SetNotifyEmail sets whether the owner is mailed about submissions.
func (d *Deployment) SetNotifyEmail(on bool) { d.Set(FieldNotifyEmail, on) }

// NotifiedUntil is the time before which submissions were mailed.
func (d *Deployment) NotifiedUntil() time.Time { return d.GetDateTime(FieldNotifiedUntil).Time() }

// SetNotifiedUntil sets the time before which submissions were mailed.
func (d *Deployment) SetNotifiedUntil(t time.Time) { d.Set(FieldNotifiedUntil, t) }

// Created is when the deployment was first saved.
func (d *Deployment) Created() time.Time { return d.GetDateTime(FieldCreated).Time() }

// Updated is when the deployment was last saved.
func (d *Deployment) Updated() time.Time { return d.GetDateTime(FieldUpdated).Time() }

// Protection is the deployment's protection; nil for a public site.
func (d *Deployment) Protection() *Protection { return ProtectionOf(d.Record) }

// Version is a record of the versions collection: one deploy's manifest
// and the settings it was deployed with.
type Version struct {
	core.BaseRecordProxy
}

// VersionOf wraps rec, a record of the versions collection (nil for nil).
func VersionOf(rec *core.Record) *Version {
	if rec == nil {
		return nil
	}
	v := &Version{}
	v.SetProxyRecord(rec)
	return v
}

// Number is the version's number, 1 for a deployment's first.
func (v *Version) Number() int { return v.GetInt(FieldVersionNumber) }

// DeploymentID is the id of the deployment the version belongs to.
func (v *Version) DeploymentID() string { return v.GetString(FieldVersionDeployment) }

// IsSPA tells whether the version was deployed as a single-page app.
func (v *Version) IsSPA() bool { return v.GetBool(FieldVersionIsSPA) }

// TextField is one descriptive text field of a deployment and its value.
type TextField struct {
	Name, Value string
}

// ChangedTexts returns the descriptive text fields (title, description,
// favicon) the save of d changes: every one of them for a new record, and
// of a saved one those whose value differs from its Original.
func (d *Deployment) ChangedTexts() []TextField {
	var out []TextField
	for _, f := range []string{FieldTitle, FieldDescription, FieldFavicon} {
		v := d.GetString(f)
		if !d.IsNew() && d.Original().GetString(f) == v {
			continue
		}
		out = append(out, TextField{Name: f, Value: v})
	}
	return out
}
