package hooks

import (
	validation "github.com/pocketbase/ozzo-validation/v4"
	"github.com/pocketbase/pocketbase/core"

	"sitedrop/sites"
	"sitedrop/sites/accounts"
	"sitedrop/sites/forms"
)

// bindRecordHooks puts the lifecycle rules where every writer meets them:
// the API, the admin dashboard and the CLI all save records through these.
func bindRecordHooks(sd *sitedrop) {
	app := sd.app

	// Slot limits: counted and saved in one transaction, so concurrent
	// creates and claims never exceed the plan.
	guardSlots := func(e *core.RecordEvent) error {
		orig := e.App
		err := e.App.RunInTransaction(func(tx core.App) error {
			e.App = tx
			if err := sd.svc.CheckSlot(tx, e.Record); err != nil {
				return err
			}
			return e.Next()
		})
		e.App = orig
		return err
	}
	app.OnRecordCreateExecute(sites.DeploymentsCollection).BindFunc(guardSlots)
	app.OnRecordUpdateExecute(sites.DeploymentsCollection).BindFunc(guardSlots)

	// An owned deployment never expires and cannot be claimed: setting an
	// owner (a claim, or an edit in the dashboard) clears both.
	ownedNeverExpires := func(e *core.RecordEvent) error {
		if e.Record.GetString("owner") != "" {
			e.Record.Set("expires_at", "")
			e.Record.Set("claim_token_hash", "")
		}
		return e.Next()
	}
	app.OnRecordCreate(sites.DeploymentsCollection).BindFunc(ownedNeverExpires)
	app.OnRecordUpdate(sites.DeploymentsCollection).BindFunc(ownedNeverExpires)

	// A protection set in the admin dashboard (a password typed into
	// protect_password_hash, protect_link switched) is hashed and gets its
	// secret, and a site left with none loses it (see
	// sites.NormalizeProtection): the gate never sees half a protection.
	normalizeProtection := func(e *core.RecordEvent) error {
		if err := sites.NormalizeProtection(e.Record); err != nil {
			return validation.Errors{"protect_password_hash": validation.NewError("validation_invalid_password", err.Error())}
		}
		return e.Next()
	}
	app.OnRecordCreate(sites.DeploymentsCollection).BindFunc(normalizeProtection)
	app.OnRecordUpdate(sites.DeploymentsCollection).BindFunc(normalizeProtection)

	// Slugs edited in the dashboard follow the API's rules.
	app.OnRecordValidate(sites.DeploymentsCollection).BindFunc(func(e *core.RecordEvent) error {
		slug := e.Record.GetString("slug")
		if e.Record.IsNew() || e.Record.Original().GetString("slug") != slug {
			if err := sites.ValidateSlug(slug); err != nil {
				return validation.Errors{"slug": validation.NewError("validation_invalid_slug", err.Error())}
			}
			if sd.svc.IsReserved(slug) {
				return validation.Errors{"slug": validation.NewError("validation_reserved_slug", msgSlugReserved)}
			}
		}
		return e.Next()
	})

	// Descriptive fields edited in the dashboard follow the API's rules
	// on characters (see checkMetadataRunes); unchanged ones are not
	// checked again.
	app.OnRecordValidate(sites.DeploymentsCollection).BindFunc(func(e *core.RecordEvent) error {
		for _, field := range []string{"title", "description", "favicon"} {
			v := e.Record.GetString(field)
			if !e.Record.IsNew() && e.Record.Original().GetString(field) == v {
				continue
			}
			if err := checkMetadataRunes(field, v); err != nil {
				return validation.Errors{field: validation.NewError("validation_invalid_characters", err.Error())}
			}
		}
		return e.Next()
	})

	// The dashboard's rollback: live_version may be set to any kept
	// version of the same deployment, and to nothing else.
	app.OnRecordValidate(sites.DeploymentsCollection).BindFunc(func(e *core.RecordEvent) error {
		live := e.Record.GetString("live_version")
		if !e.Record.IsNew() && live != e.Record.Original().GetString("live_version") {
			v, err := e.App.FindRecordById(sites.VersionsCollection, live)
			if err != nil || v.GetString("deployment") != e.Record.Id {
				return validation.Errors{"live_version": validation.NewError("validation_unknown_version",
					"live_version must be the id of one of this deployment's versions")}
			}
		}
		return e.Next()
	})

	// Any change to a deployment is visible on the next request, and a
	// reader who saw it never sees the old site again: the site cache is
	// told before the write and again once its transaction has ended
	// (committed or rolled back), and caches no load in between.
	bracket := func(e *core.RecordEvent, slugs ...string) error {
		done := sd.changing(slugs...)
		if tx := e.App.TxInfo(); tx != nil {
			tx.OnComplete(func(error) error { done(); return nil })
		} else {
			defer done() // saved on its own: committed when Next returns
		}
		defer func() {
			if r := recover(); r != nil {
				done() // the transaction will not complete normally
				panic(r)
			}
		}()
		return e.Next()
	}
	changing := func(e *core.RecordEvent) error {
		slugs := []string{e.Record.GetString("slug")}
		if orig := e.Record.Original(); orig != nil && orig.GetString("slug") != "" && orig.GetString("slug") != slugs[0] {
			slugs = append(slugs, orig.GetString("slug"))
		}
		return bracket(e, slugs...)
	}
	app.OnRecordCreateExecute(sites.DeploymentsCollection).BindFunc(changing)
	app.OnRecordUpdateExecute(sites.DeploymentsCollection).BindFunc(changing)
	app.OnRecordDeleteExecute(sites.DeploymentsCollection).BindFunc(changing)
	// A version edited in the dashboard (its manifest) changes what its
	// deployment serves when it is the live one.
	versionChanging := func(e *core.RecordEvent) error {
		dep, err := e.App.FindFirstRecordByData(sites.DeploymentsCollection, "live_version", e.Record.Id)
		if err != nil {
			return e.Next() // not live anywhere
		}
		return bracket(e, dep.GetString("slug"))
	}
	app.OnRecordUpdateExecute(sites.VersionsCollection).BindFunc(versionChanging)
	// Deleting, from anywhere, takes the site offline at once and leaves
	// its content to the collector (versions go by cascade).
	app.OnRecordAfterDeleteSuccess(sites.DeploymentsCollection).BindFunc(func(e *core.RecordEvent) error {
		sd.gcDue.set()
		return e.Next()
	})
	app.OnRecordAfterDeleteSuccess(sites.VersionsCollection).BindFunc(func(e *core.RecordEvent) error {
		sd.gcDue.set()
		return e.Next()
	})

	// Webhook events of deployments. deployment.updated fires when the
	// live content changes (a PUT, from the API or any other writer);
	// deployment.deleted is queued in the delete's own transaction, before
	// the cascade removes the webhooks, and its deliveries outlive it.
	app.OnRecordAfterUpdateSuccess(sites.DeploymentsCollection).BindFunc(func(e *core.RecordEvent) error {
		if orig := e.Record.Original(); orig != nil && orig.GetString("live_version") != e.Record.GetString("live_version") {
			if _, err := forms.EnqueueWebhooks(e.App, e.Record.Id, forms.EventDeploymentUpdated, sd.deploymentRef(e.Record), nil); err != nil {
				e.App.Logger().Error("queue deployment.updated webhooks", "deployment", e.Record.Id, "error", err)
			}
			sd.wakeWorkers()
		}
		return e.Next()
	})
	app.OnRecordDelete(sites.DeploymentsCollection).BindFunc(func(e *core.RecordEvent) error {
		orig := e.App
		err := e.App.RunInTransaction(func(tx core.App) error {
			e.App = tx
			if _, err := forms.EnqueueWebhooks(tx, e.Record.Id, forms.EventDeploymentDeleted, sd.deploymentRef(e.Record), nil); err != nil {
				return err
			}
			return e.Next()
		})
		e.App = orig
		if err == nil {
			sd.wakeWorkers()
		}
		return err
	})

	// Every account has a plan; free unless set.
	defaultPlan := func(e *core.RecordEvent) error {
		if e.Record.GetString("plan") == "" {
			e.Record.Set("plan", sites.PlanFree)
		}
		return e.Next()
	}
	app.OnRecordCreate(accounts.UsersCollection).BindFunc(defaultPlan)
	app.OnRecordUpdate(accounts.UsersCollection).BindFunc(defaultPlan)
}
