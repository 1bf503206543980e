package hooks

import (
	"fmt"
	"net/http"
	"net/url"
	"sync"

	"github.com/pocketbase/pocketbase/apis"
	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tools/hook"

	"sitedrop/sites"
	"sitedrop/sites/accounts"
	"sitedrop/sites/audit"
	"sitedrop/sites/domains"
	"sitedrop/sites/forms"
)

// msgAuditAppendOnly refuses every change to the audit log but appending.
const msgAuditAppendOnly = "the audit log is append-only: sitedrop writes its entries, and no one edits or deletes them"

// auditActorMiddlewareId names the middleware that tells the audit log who
// a request is (auditActors).
const auditActorMiddlewareId = "sitedropAuditActor"

// bindAuditHooks writes the audit log from the record hooks, so that every
// writer (the API, the pages, MCP through the API, the admin dashboard)
// logs the same actions: a deployment created (deploy), a new version
// (update), deleted, its live version moved back (rollback) or forward
// (promote), protected, renamed, paused, resumed, claimed; a custom domain
// added or removed; an API key created or revoked; a webhook created or
// deleted. Who acted is the actor the save's context carries: every
// service that saves for a request takes its context (see auditActors),
// and an edit in the dashboard saves through an app that carries it; what
// a deployment's deletion takes with it is that deletion's; a save with
// no actor (a job, the admin CLI) is sitedrop's (system). Entries are written in the action's transaction when it has
// one; a failure to write one is logged, not the action's failure.
//
// The log itself is append-only: updates and deletes are refused from
// every writer (Purge deletes in SQL), and the record API refuses to
// create entries.
func bindAuditHooks(app core.App, clientIP func(*http.Request) string) {
	refuse := func(e *core.RecordEvent) error { return apis.NewForbiddenError(msgAuditAppendOnly, nil) }
	app.OnRecordUpdate(audit.Collection).BindFunc(refuse)
	app.OnRecordDelete(audit.Collection).BindFunc(refuse)
	refuseRequest := func(e *core.RecordRequestEvent) error { return e.ForbiddenError(msgAuditAppendOnly, nil) }
	app.OnRecordCreateRequest(audit.Collection).BindFunc(refuseRequest)
	app.OnRecordUpdateRequest(audit.Collection).BindFunc(refuseRequest)
	app.OnRecordDeleteRequest(audit.Collection).BindFunc(refuseRequest)

	// write logs ent about owner's thing: its actor is the one the save's
	// context carries, else ent.Actor (what goes with a deleted
	// deployment: who deleted it), else sitedrop itself.
	write := func(e *core.RecordEvent, owner string, ent audit.Entry) {
		if a, ok := audit.ActorOf(e.Context); ok {
			ent.Actor = a
		}
		if ent.Actor == (audit.Actor{}) {
			ent.Actor = audit.Actor{Kind: audit.KindSystem}
		}
		ent.Owner = owner
		if err := audit.Record(e.Context, e.App, ent); err != nil {
			e.App.Logger().Error("audit: entry not written", "action", ent.Action, "target", ent.Target, "error", err)
		}
	}
	after := func(f func(e *core.RecordEvent)) func(e *core.RecordEvent) error {
		return func(e *core.RecordEvent) error {
			if err := e.Next(); err != nil {
				return err
			}
			f(e)
			return nil
		}
	}

	// Deployments.
	app.OnRecordCreateExecute(sites.DeploymentsCollection).BindFunc(after(func(e *core.RecordEvent) {
		dep := sites.DeploymentOf(e.Record)
		write(e, dep.OwnerID(), audit.Entry{Action: audit.ActionDeploy, Kind: audit.TargetDeployment, Target: dep.Id,
			Details: map[string]any{"slug": dep.Slug()}})
	}))
	// going holds the deployments being deleted, their owner and who
	// deletes them, for the entries of what goes with them (domains,
	// webhooks: PocketBase's cascade deletes them without the context).
	var going sync.Map
	app.OnRecordDeleteExecute(sites.DeploymentsCollection).BindFunc(func(e *core.RecordEvent) error {
		dep := sites.DeploymentOf(e.Record)
		by, _ := audit.ActorOf(e.Context)
		going.Store(dep.Id, goingDeployment{owner: dep.OwnerID(), by: by})
		defer going.Delete(dep.Id)
		if err := e.Next(); err != nil {
			return err
		}
		write(e, dep.OwnerID(), audit.Entry{Action: audit.ActionDelete, Kind: audit.TargetDeployment, Target: dep.Id,
			Details: map[string]any{"slug": dep.Slug()}})
		return nil
	})
	// A version saved in a transaction whose deployment then goes live on
	// it is the deploy's (update), not a promote: fresh holds the versions
	// created in the transactions still running.
	var fresh sync.Map
	app.OnRecordCreateExecute(sites.VersionsCollection).BindFunc(after(func(e *core.RecordEvent) {
		v := sites.VersionOf(e.Record)
		if tx := e.App.TxInfo(); tx != nil {
			fresh.Store(v.Id, true)
			tx.OnComplete(func(error) error { fresh.Delete(v.Id); return nil })
		}
		if v.Number() <= 1 {
			return // the deployment's first: its deploy entry says it
		}
		dep, err := sites.DeploymentOfSave(e) // as the record hooks read it
		if err != nil {
			return
		}
		write(e, dep.OwnerID(), audit.Entry{Action: audit.ActionUpdate, Kind: audit.TargetDeployment, Target: dep.Id,
			Details: map[string]any{"slug": dep.Slug(), "version": v.Number()}})
	}))
	app.OnRecordUpdateExecute(sites.DeploymentsCollection).BindFunc(after(func(e *core.RecordEvent) {
		dep := sites.DeploymentOf(e.Record)
		orig := dep.Original()
		owner := dep.OwnerID()
		entry := func(action string, details map[string]any) {
			details["slug"] = dep.Slug()
			write(e, owner, audit.Entry{Action: action, Kind: audit.TargetDeployment, Target: dep.Id, Details: details})
		}
		if orig.OwnerID() == "" && owner != "" {
			entry(audit.ActionClaim, map[string]any{})
		}
		if orig.Slug() != dep.Slug() {
			entry(audit.ActionRename, map[string]any{"from": orig.Slug(), "to": dep.Slug()})
		}
		if orig.Paused() != dep.Paused() {
			action := audit.ActionResume
			if dep.Paused() {
				action = audit.ActionPause
			}
			entry(action, map[string]any{})
		}
		if orig.TakedownReason() != dep.TakedownReason() {
			if dep.TakenDown() {
				entry(audit.ActionTakedown, map[string]any{"reason": dep.TakedownReason()})
			} else {
				entry(audit.ActionRestore, map[string]any{})
			}
		}
		if was, is := orig.Protection(), dep.Protection(); !sameProtection(was, is) {
			entry(audit.ActionProtect, map[string]any{
				"password": is != nil && is.PasswordHash != "", "link": is != nil && is.Link})
		}
		if from, to := orig.LiveVersion(), dep.LiveVersion(); from != to && from != "" {
			if _, ok := fresh.Load(to); ok {
				return // a deploy going live on its new version: logged as its update
			}
			fv, err1 := sites.FindVersionHead(e.App, dep.Id, from)
			tv, err2 := sites.FindVersionHead(e.App, dep.Id, to)
			if err1 != nil || err2 != nil {
				return
			}
			n, m := sites.VersionOf(fv).Number(), sites.VersionOf(tv).Number()
			action := audit.ActionPromote
			if m < n {
				action = audit.ActionRollback
			}
			entry(action, map[string]any{"from": n, "to": m})
		}
	}))

	// API keys.
	keyEntry := func(action string) func(e *core.RecordEvent) {
		return func(e *core.RecordEvent) {
			k := accounts.APIKeyOf(e.Record)
			write(e, k.UserID(), audit.Entry{Action: action, Kind: audit.TargetKey, Target: k.Id,
				Details: map[string]any{"name": k.Name(), "prefix": k.Prefix()}})
		}
	}
	app.OnRecordCreateExecute(accounts.APIKeysCollection).BindFunc(after(keyEntry(audit.ActionKeyCreate)))
	app.OnRecordDeleteExecute(accounts.APIKeysCollection).BindFunc(after(keyEntry(audit.ActionKeyRevoke)))

	// What belongs to a deployment: its owner is the deployment's.
	// ownerOf is the owner of the deployment depID, and who deletes it
	// when it is going.
	ownerOf := func(app core.App, depID string) (string, audit.Actor) {
		if g, ok := going.Load(depID); ok {
			return g.(goingDeployment).owner, g.(goingDeployment).by
		}
		dep, err := sites.FindDeployment(app, depID)
		if err != nil {
			return "", audit.Actor{}
		}
		return dep.OwnerID(), audit.Actor{}
	}
	domainEntry := func(action string) func(e *core.RecordEvent) {
		return func(e *core.RecordEvent) {
			depID := domains.DeploymentIDOf(e.Record)
			owner, by := ownerOf(e.App, depID)
			write(e, owner, audit.Entry{Actor: by, Action: action, Kind: audit.TargetDomain, Target: e.Record.Id,
				Details: map[string]any{"domain": domains.NamesOf(e.Record)[0], "deployment": depID}})
		}
	}
	app.OnRecordCreateExecute(domains.Collection).BindFunc(after(domainEntry(audit.ActionDomainAdd)))
	app.OnRecordDeleteExecute(domains.Collection).BindFunc(after(domainEntry(audit.ActionDomainRemove)))
	webhookEntry := func(action string) func(e *core.RecordEvent) {
		return func(e *core.RecordEvent) {
			w := forms.WebhookOf(e.Record)
			host := ""
			if u, err := url.Parse(w.URL()); err == nil {
				host = u.Host // never the path or query: they may hold a token
			}
			owner, by := ownerOf(e.App, w.DeploymentID())
			write(e, owner, audit.Entry{Actor: by, Action: action, Kind: audit.TargetWebhook, Target: w.Id,
				Details: map[string]any{"host": host, "deployment": w.DeploymentID()}})
		}
	}
	app.OnRecordCreateExecute(forms.WebhooksCollection).BindFunc(after(webhookEntry(audit.ActionWebhookCreate)))
	app.OnRecordDeleteExecute(forms.WebhooksCollection).BindFunc(after(webhookEntry(audit.ActionWebhookDelete)))

	// The blocklist and the instance's settings: admins' actions, no
	// owner's (only admins see them, in the dashboard).
	blockEntry := func(action string) func(e *core.RecordEvent) {
		return func(e *core.RecordEvent) {
			b := sites.BlockOf(e.Record)
			write(e, "", audit.Entry{Action: action, Kind: audit.TargetBlock, Target: b.Id,
				Details: map[string]any{"kind": b.Kind(), "value": b.Value()}})
		}
	}
	app.OnRecordCreateExecute(sites.BlocklistCollection).BindFunc(after(blockEntry(audit.ActionBlock)))
	app.OnRecordDeleteExecute(sites.BlocklistCollection).BindFunc(after(blockEntry(audit.ActionUnblock)))
	app.OnRecordUpdateExecute(sites.SettingsCollection).BindFunc(after(func(e *core.RecordEvent) {
		changed := map[string]any{}
		for _, f := range e.Record.Collection().Fields {
			name := f.GetName()
			if name == "id" || name == "created" || name == "updated" {
				continue
			}
			if now := e.Record.Get(name); fmt.Sprint(now) != fmt.Sprint(e.Record.Original().Get(name)) {
				changed[name] = now
			}
		}
		write(e, "", audit.Entry{Action: audit.ActionSettings, Kind: audit.TargetSettings, Target: e.Record.Id, Details: changed})
	}))

	// The admin dashboard saves through its request event's app: made
	// Acting, its saves carry the superuser as the actor.
	for _, c := range []string{sites.DeploymentsCollection, sites.VersionsCollection, accounts.APIKeysCollection, domains.Collection, forms.WebhooksCollection, sites.BlocklistCollection, sites.SettingsCollection} {
		acting := func(e *core.RecordRequestEvent) error {
			e.App = audit.Acting(e.App, requestActor(e.RequestEvent, clientIP(e.Request)))
			return e.Next()
		}
		app.OnRecordCreateRequest(c).BindFunc(acting)
		app.OnRecordUpdateRequest(c).BindFunc(acting)
		app.OnRecordDeleteRequest(c).BindFunc(acting)
	}
}

// goingDeployment is a deployment being deleted: its owner, and who
// deletes it (zero: not known, sitedrop).
type goingDeployment struct {
	owner string
	by    audit.Actor
}

// sameProtection reports whether two protections let the same visitors
// in the same way (nil: public).
func sameProtection(a, b *sites.Protection) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.PasswordHash == b.PasswordHash && a.Link == b.Link && a.Secret == b.Secret
}

// requestActor is who e is, resolved when asked: a superuser, the account
// the auth middlewares left on it, or an anonymous client, from ip.
func requestActor(e *core.RequestEvent, ip string) func() audit.Actor {
	return func() audit.Actor {
		if u := userOf(e); u != nil {
			return audit.User(u.Id, ip)
		}
		if e.HasSuperuserAuth() {
			return audit.Superuser(e.Auth.Id, ip)
		}
		return audit.Anonymous(ip)
	}
}

// auditActors is the router middleware that tells the audit log who each
// request is: its context carries the actor, for the writes that save
// with it (every service saving for a request takes its context). The
// client's address is the one clientIP resolves behind --trusted-proxies.
func auditActors(clientIP func(*http.Request) string) *hook.Handler[*core.RequestEvent] {
	return &hook.Handler[*core.RequestEvent]{
		Id: auditActorMiddlewareId,
		Func: func(e *core.RequestEvent) error {
			ip := clientIP(e.Request)
			e.Request = e.Request.WithContext(audit.WithActor(e.Request.Context(), requestActor(e, ip)))
			return e.Next()
		},
	}
}
