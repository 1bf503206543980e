// Package audit keeps sitedrop's audit log: who did what to which
// deployment, key, domain or webhook, when and from which address. It is
// on PocketBase alone, so every part can write to it. An admin route
// (a takedown, a ban) logs its action with the request's context, which
// carries the caller (hooks binds a middleware that puts it there):
//
//	err := audit.Record(e.Request.Context(), e.App, audit.Entry{
//		Action: audit.ActionTakedown, Kind: audit.TargetDeployment,
//		Target: dep.Id, Owner: dep.OwnerID(),
//		Details: map[string]any{"slug": dep.Slug(), "reason": reason}})
//	page, err := audit.ListOwned(app, ownerID, 1, 50) // newest first
//	n, err := audit.Purge(app, time.Now())            // older than Keep
//
// The changes of records (deploys, renames, keys, domains, webhooks…) are
// logged by hooks' record hooks (hooks/audit_records.go), whoever saves
// them; a writer that saves with a context made by WithActor (sitedrop's
// services take the caller's request context and save with it), or
// through an app made by Acting, names its actor; a save with neither is
// sitedrop's own (KindSystem).
//
// The log is append-only from the API's point of view: its collection's
// rules let no one but superusers read it through PocketBase's record
// API, and the record hooks refuse every update and delete, from the
// admin dashboard too. Only Purge (entries Keep old) and DeleteAccount (a
// deleted account's) remove entries, in SQL, past the hooks.
package audit

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/pocketbase/dbx"
	"github.com/pocketbase/pocketbase/core"
)

// Collection is the name of the audit log's collection.
const Collection = "audit_log"

// Fields of the audit_log collection.
const (
	FieldActor      = "actor"
	FieldActorKind  = "actor_kind"
	FieldIP         = "ip"
	FieldAction     = "action"
	FieldTargetKind = "target_kind"
	FieldTarget     = "target"
	FieldOwner      = "owner"
	FieldDetails    = "details"
	FieldCreated    = "created"
)

// Keep is how long entries are kept before Purge drops them.
const Keep = 90 * 24 * time.Hour

// MaxDetailsBytes bounds an entry's details as JSON; larger details are
// replaced by {"truncated": true} rather than refused, so that an action
// is never lost to the size of its description.
const MaxDetailsBytes = 2048

// Who did it: Actor.Kind.
const (
	KindUser      = "user"
	KindSuperuser = "superuser"
	KindAnonymous = "anonymous"
	// KindSystem is sitedrop itself: a job (expiry, collection), or a
	// writer whose caller is not known.
	KindSystem = "system"
)

// What it was done to: Entry.Kind.
const (
	TargetDeployment = "deployment"
	TargetKey        = "api_key"
	TargetDomain     = "domain"
	TargetWebhook    = "webhook"
	TargetUser       = "user"
	TargetBlock      = "block"    // a blocklist entry
	TargetSettings   = "settings" // the sitedrop_settings record
)

// Actions. Parts added later (takedown, restore, ban) use their own
// names in the same style.
const (
	ActionDeploy        = "deploy"         // a new deployment
	ActionUpdate        = "update"         // a new version of one
	ActionDelete        = "delete"         // a deployment deleted
	ActionRollback      = "rollback"       // the live version moved to an older one
	ActionPromote       = "promote"        // the live version moved to a newer one (a draft)
	ActionProtect       = "protect"        // protection set, changed or removed
	ActionRename        = "rename"         // the slug changed
	ActionPause         = "pause"          // the owner paused the site
	ActionResume        = "resume"         // and resumed it
	ActionClaim         = "claim"          // an anonymous deployment got an owner
	ActionDomainAdd     = "domain_add"     // a custom domain added
	ActionDomainRemove  = "domain_remove"  // and removed
	ActionKeyCreate     = "key_create"     // an API key created
	ActionKeyRevoke     = "key_revoke"     // and revoked
	ActionWebhookCreate = "webhook_create" // a webhook created
	ActionWebhookDelete = "webhook_delete" // and deleted
	ActionTakedown      = "takedown"       // an admin took a site down
	ActionRestore       = "restore"        // and restored it
	ActionBan           = "ban"            // an admin banned an account
	ActionUnban         = "unban"          // and lifted the ban
	ActionBlock         = "block"          // an admin added a block to the blocklist
	ActionUnblock       = "unblock"        // and removed one
	ActionSettings      = "settings"       // an admin changed the instance's settings (anonymous deploys)
)

// Actions lists every action above, the values of the collection's
// action field.
var Actions = []string{
	ActionDeploy, ActionUpdate, ActionDelete, ActionRollback, ActionPromote,
	ActionProtect, ActionRename, ActionPause, ActionResume, ActionClaim,
	ActionDomainAdd, ActionDomainRemove, ActionKeyCreate, ActionKeyRevoke,
	ActionWebhookCreate, ActionWebhookDelete, ActionTakedown, ActionRestore, ActionBan,
	ActionUnban, ActionBlock, ActionUnblock, ActionSettings,
}

// Actor is who did something: an account (ID is its id), a superuser
// (ID is the superuser's id), an anonymous client (no ID), or sitedrop
// itself. IP is the client's address as the server resolves it behind
// --trusted-proxies; "" when not known.
type Actor struct {
	Kind string
	ID   string
	IP   string
}

// User is the account id acting from ip.
func User(id, ip string) Actor { return Actor{Kind: KindUser, ID: id, IP: ip} }

// Superuser is the superuser id acting from ip.
func Superuser(id, ip string) Actor { return Actor{Kind: KindSuperuser, ID: id, IP: ip} }

// Anonymous is a client without an account at ip.
func Anonymous(ip string) Actor { return Actor{Kind: KindAnonymous, IP: ip} }

// who is the actor column: the id, or the kind for one without an id.
func (a Actor) who() string {
	if a.ID != "" {
		return a.ID
	}
	if a.Kind == "" {
		return KindSystem
	}
	return a.Kind
}

type actorKey struct{}

// WithActor returns ctx carrying who acts in it. actor is called when an
// entry is written, not before, so a request can hand it over before it
// knows its caller (its auth is loaded later in the chain).
func WithActor(ctx context.Context, actor func() Actor) context.Context {
	return context.WithValue(ctx, actorKey{}, actor)
}

// ActorOf is the actor ctx carries (WithActor), and whether it carries one.
func ActorOf(ctx context.Context) (Actor, bool) {
	if ctx == nil {
		return Actor{}, false
	}
	f, ok := ctx.Value(actorKey{}).(func() Actor)
	if !ok || f == nil {
		return Actor{}, false
	}
	return f(), true
}

// Entry is one action, as Record writes it.
type Entry struct {
	// Actor is who did it; zero: the actor ctx carries, or sitedrop
	// itself (KindSystem) when it carries none.
	Actor Actor
	// Action is what was done: one of Actions.
	Action string
	// Kind and Target name what it was done to: a Target* kind and the
	// record's id.
	Kind   string
	Target string
	// Owner is the account whose thing it is ("" for an anonymous
	// deployment): the owner sees the entry on their activity page.
	Owner string
	// Details is a small description (bounded by MaxDetailsBytes).
	Details map[string]any
}

// Record appends e to the log of app. The actor is e.Actor, or the one
// ctx carries (WithActor). Entries are written through app, so inside a
// transaction they commit or roll back with the action they describe.
func Record(ctx context.Context, app core.App, e Entry) error {
	col, err := app.FindCachedCollectionByNameOrId(Collection)
	if err != nil {
		return fmt.Errorf("audit: find %s: %w", Collection, err)
	}
	a := e.Actor
	if a == (Actor{}) {
		a, _ = ActorOf(ctx)
	}
	if a.Kind == "" {
		a.Kind = KindSystem
	}
	rec := core.NewRecord(col)
	rec.Set(FieldActor, a.who())
	rec.Set(FieldActorKind, a.Kind)
	rec.Set(FieldIP, a.IP)
	rec.Set(FieldAction, e.Action)
	rec.Set(FieldTargetKind, e.Kind)
	rec.Set(FieldTarget, e.Target)
	rec.Set(FieldOwner, e.Owner)
	rec.Set(FieldDetails, boundDetails(e.Details))
	if err := app.Save(rec); err != nil {
		return fmt.Errorf("audit: record %s of %s %s: %w", e.Action, e.Kind, e.Target, err)
	}
	return nil
}

// boundDetails is d, or {"truncated": true} when d is larger than
// MaxDetailsBytes as JSON (or not JSON at all).
func boundDetails(d map[string]any) any {
	if len(d) == 0 {
		return map[string]any{}
	}
	b, err := json.Marshal(d)
	if err != nil || len(b) > MaxDetailsBytes {
		return map[string]any{"truncated": true}
	}
	return json.RawMessage(b)
}

// Purge deletes the entries older than Keep at now and returns how many.
// It deletes in SQL, past the record hooks that refuse every other delete.
func Purge(app core.App, now time.Time) (int64, error) {
	cutoff := now.UTC().Add(-Keep).Format(dbFormat)
	res, err := app.NonconcurrentDB().Delete(Collection,
		dbx.NewExp(FieldCreated+" < {:cutoff}", dbx.Params{"cutoff": cutoff})).Execute()
	if err != nil {
		return 0, fmt.Errorf("audit: purge before %s: %w", cutoff, err)
	}
	n, _ := res.RowsAffected()
	return n, nil
}

// dbFormat is how PocketBase stores dates (types.DefaultDateLayout).
const dbFormat = "2006-01-02 15:04:05.000Z"

// Acting returns app whose saves and deletes (inside its transactions
// too) carry actor in their context, so that the record hooks writing the
// log know who acts: the admin dashboard's record API saves through the
// app of its request event, which hooks replaces with this one.
func Acting(app core.App, actor func() Actor) core.App {
	return &actingApp{App: app, actor: actor}
}

// actingApp is Acting's app.
type actingApp struct {
	core.App
	actor func() Actor
}

func (a *actingApp) Save(m core.Model) error {
	return a.App.SaveWithContext(WithActor(context.Background(), a.actor), m)
}

func (a *actingApp) SaveWithContext(ctx context.Context, m core.Model) error {
	return a.App.SaveWithContext(WithActor(ctx, a.actor), m)
}

func (a *actingApp) SaveNoValidate(m core.Model) error {
	return a.App.SaveNoValidateWithContext(WithActor(context.Background(), a.actor), m)
}

func (a *actingApp) SaveNoValidateWithContext(ctx context.Context, m core.Model) error {
	return a.App.SaveNoValidateWithContext(WithActor(ctx, a.actor), m)
}

func (a *actingApp) Delete(m core.Model) error {
	return a.App.DeleteWithContext(WithActor(context.Background(), a.actor), m)
}

func (a *actingApp) DeleteWithContext(ctx context.Context, m core.Model) error {
	return a.App.DeleteWithContext(WithActor(ctx, a.actor), m)
}

func (a *actingApp) RunInTransaction(fn func(txApp core.App) error) error {
	return a.App.RunInTransaction(func(tx core.App) error {
		return fn(&actingApp{App: tx, actor: a.actor})
	})
}

// DeleteAccount deletes the entries about account id's things and those
// it wrote, when the account is deleted: a closed account leaves nothing
// that names it. Like Purge it deletes in SQL, past the append-only hooks;
// run it in the deletion's transaction, after the account's things are
// gone (their deletion writes entries too).
func DeleteAccount(app core.App, id string) error {
	if id == "" {
		return nil
	}
	_, err := app.NonconcurrentDB().Delete(Collection, dbx.Or(
		dbx.HashExp{FieldOwner: id},
		dbx.HashExp{FieldActor: id},
	)).Execute()
	if err != nil {
		return fmt.Errorf("audit: delete the entries of account %s: %w", id, err)
	}
	return nil
}
