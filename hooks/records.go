package hooks

import (
	"errors"
	"time"

	validation "github.com/pocketbase/ozzo-validation/v4"
	"github.com/pocketbase/pocketbase/core"

	"sitedrop/sites"
	"sitedrop/sites/accounts"
	"sitedrop/sites/forms"
	"sitedrop/sites/intake"
)

// bindRecordHooks puts the lifecycle rules where every writer meets them:
// the API, the admin dashboard and the CLI all save records through these.
// They use svc's rules, tell pub of every change to what sites serve, mark
// upkeep's collection due when content may have become unreferenced, and
// queue the deployments' webhooks (named by ref) and wake their senders.
//
// ref names a deployment in a webhook payload, with the version given
// (nil: none) and that version's preview URL when preview is set.
func bindRecordHooks(app core.App, svc *sites.Service, pub *sitePublisher, upkeep *sites.Upkeep, ref func(dep, ver *core.Record, preview bool) forms.DeploymentRef, wake func()) {
	// Slot limits: counted and saved in one transaction, so concurrent
	// creates and claims never exceed the plan.
	guardSlots := func(e *core.RecordEvent) error {
		return sites.InEventTransaction(e, func(tx core.App) error {
			return svc.CheckSlot(tx, e.Record)
		})
	}
	app.OnRecordCreateExecute(sites.DeploymentsCollection).BindFunc(guardSlots)
	app.OnRecordUpdateExecute(sites.DeploymentsCollection).BindFunc(guardSlots)

	// A slug, new or changed, is not another site's kept old slug, and a
	// renamed site keeps its old one, redirecting, for 30 days
	// (sites.FollowRename): the API, the pages and the admin dashboard
	// rename alike.
	followRename := func(e *core.RecordEvent) error {
		return sites.InEventTransaction(e, func(tx core.App) error {
			return sites.FollowRename(tx, e.Record, time.Now().UTC())
		})
	}
	app.OnRecordCreateExecute(sites.DeploymentsCollection).BindFunc(followRename)
	app.OnRecordUpdateExecute(sites.DeploymentsCollection).BindFunc(followRename)

	// An owned deployment never expires, cannot be claimed and is not
	// held for a claim: setting an owner (a claim, or an edit in the
	// dashboard) clears all three.
	ownedNeverExpires := func(e *core.RecordEvent) error {
		if dep := sites.DeploymentOf(e.Record); dep.OwnerID() != "" {
			dep.SetExpiresAt(time.Time{})
			dep.SetClaimTokenHash("")
			dep.SetAwaitingClaim(false)
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
			return validation.Errors{sites.FieldProtectPasswordHash: validation.NewError("validation_invalid_password", err.Error())}
		}
		return e.Next()
	}
	app.OnRecordCreate(sites.DeploymentsCollection).BindFunc(normalizeProtection)
	app.OnRecordUpdate(sites.DeploymentsCollection).BindFunc(normalizeProtection)

	// Slugs edited in the dashboard follow the API's rules.
	app.OnRecordValidate(sites.DeploymentsCollection).BindFunc(func(e *core.RecordEvent) error {
		dep := sites.DeploymentOf(e.Record)
		slug := dep.Slug()
		if dep.IsNew() || dep.Original().Slug() != slug {
			if err := sites.ValidateSlug(slug); err != nil {
				return validation.Errors{sites.FieldSlug: validation.NewError("validation_invalid_slug", err.Error())}
			}
			if svc.IsReserved(slug) {
				return validation.Errors{sites.FieldSlug: validation.NewError("validation_reserved_slug", msgSlugReserved)}
			}
		}
		return e.Next()
	})

	// Descriptive fields edited in the dashboard follow the API's rules
	// on characters (see intake.CheckMetadataRunes); unchanged ones are not
	// checked again.
	app.OnRecordValidate(sites.DeploymentsCollection).BindFunc(func(e *core.RecordEvent) error {
		for _, f := range sites.DeploymentOf(e.Record).ChangedTexts() {
			if err := intake.CheckMetadataRunes(f.Name, f.Value); err != nil {
				return validation.Errors{f.Name: validation.NewError("validation_invalid_characters", err.Error())}
			}
		}
		return e.Next()
	})

	// A site's icon is one emoji or none (sites.CheckFavicon), set from
	// anywhere (the admin dashboard included); an icon saved before the
	// rule is not checked again until it changes.
	faviconRule := func(e *core.RecordEvent) error {
		icon := e.Record.GetString(sites.FieldFavicon)
		if e.Record.IsNew() || e.Record.Original().GetString(sites.FieldFavicon) != icon {
			if err := sites.CheckFavicon(icon); err != nil {
				return validation.Errors{sites.FieldFavicon: validation.NewError("validation_invalid_favicon", err.Error())}
			}
		}
		return e.Next()
	}
	app.OnRecordValidate(sites.DeploymentsCollection).BindFunc(faviconRule)
	app.OnRecordValidate(sites.VersionsCollection).BindFunc(faviconRule)

	// The dashboard's rollback: live_version may be set to any kept
	// version of the same deployment, and to nothing else.
	app.OnRecordValidate(sites.DeploymentsCollection).BindFunc(func(e *core.RecordEvent) error {
		dep := sites.DeploymentOf(e.Record)
		live := dep.LiveVersion()
		if !dep.IsNew() && live != dep.Original().LiveVersion() {
			if _, err := sites.FindVersionHead(e.App, dep.Id, live); err != nil {
				return validation.Errors{sites.FieldLiveVersion: validation.NewError("validation_unknown_version",
					"live_version must be the id of one of this deployment's versions")}
			}
		}
		return e.Next()
	})

	// An alias, saved from anywhere, has a valid name and names a version
	// of its own deployment.
	app.OnRecordValidate(sites.AliasesCollection).BindFunc(func(e *core.RecordEvent) error {
		if err := sites.CheckAlias(e.App, e.Record); err != nil {
			var fe *sites.FieldError
			if errors.As(err, &fe) {
				return validation.Errors{fe.Field: validation.NewError("validation_invalid_alias", fe.Msg)}
			}
			return err
		}
		return e.Next()
	})

	// The live version's settings are the site's (sites.FollowLiveVersion),
	// whoever switches the version or changes a setting.
	app.OnRecordUpdateExecute(sites.DeploymentsCollection).BindFunc(func(e *core.RecordEvent) error {
		return sites.InEventTransaction(e, func(tx core.App) error {
			return sites.FollowLiveVersion(tx, e.Record)
		})
	})

	// Any change to a deployment is visible on the next request, and a
	// reader who saw it never sees the old site again: the site cache is
	// told before the write and again once its transaction has ended
	// (committed or rolled back), and caches no load in between.
	bracket := func(e *core.RecordEvent, slugs ...string) error {
		done := pub.changing(slugs...)
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
		dep := sites.DeploymentOf(e.Record)
		slugs := []string{dep.Slug()}
		orig := dep.Original()
		renamed := orig != nil && orig.Slug() != "" && orig.Slug() != slugs[0]
		if renamed {
			slugs = append(slugs, orig.Slug())
		}
		// the slugs kept from earlier renames redirect to the new one,
		// and answer the takedown page while it is taken down
		if renamed || (orig != nil && orig.TakedownReason() != dep.TakedownReason()) {
			olds, err := sites.OldSlugs(e.App, dep.Id, time.Now())
			if err != nil {
				return err
			}
			for _, r := range olds {
				slugs = append(slugs, r.Slug())
			}
		}
		return bracket(e, slugs...)
	}
	app.OnRecordCreateExecute(sites.DeploymentsCollection).BindFunc(changing)
	app.OnRecordUpdateExecute(sites.DeploymentsCollection).BindFunc(changing)
	app.OnRecordDeleteExecute(sites.DeploymentsCollection).BindFunc(changing)
	// A version or an alias saved or deleted from anywhere (a draft, a
	// prune, an alias moved, a manifest edited in the dashboard) changes
	// what its deployment's hosts serve: the live one, and the preview
	// hosts (v<N>--<slug>, <alias>--<slug>), which the site cache forgets
	// with their site and the publisher publishes with it.
	ownerChanging := func(e *core.RecordEvent) error {
		dep, err := sites.DeploymentOfSave(e) // read once for the takedown check too
		if err != nil {
			return e.Next() // going with its deployment
		}
		return bracket(e, dep.Slug())
	}
	for _, collection := range []string{sites.VersionsCollection, sites.AliasesCollection} {
		app.OnRecordCreateExecute(collection).BindFunc(ownerChanging)
		app.OnRecordUpdateExecute(collection).BindFunc(ownerChanging)
		app.OnRecordDeleteExecute(collection).BindFunc(ownerChanging)
	}
	// A renamed site's old slug, kept or freed, changes what its host
	// answers (a redirect, then nothing).
	oldSlugChanging := func(e *core.RecordEvent) error {
		return bracket(e, sites.SlugRedirectOf(e.Record).Slug())
	}
	app.OnRecordCreateExecute(sites.SlugRedirectsCollection).BindFunc(oldSlugChanging)
	app.OnRecordUpdateExecute(sites.SlugRedirectsCollection).BindFunc(oldSlugChanging)
	app.OnRecordDeleteExecute(sites.SlugRedirectsCollection).BindFunc(oldSlugChanging)
	// Deleting, from anywhere, takes the site offline at once and leaves
	// its content to the collector (versions go by cascade).
	app.OnRecordAfterDeleteSuccess(sites.DeploymentsCollection).BindFunc(func(e *core.RecordEvent) error {
		upkeep.MarkDue()
		return e.Next()
	})
	app.OnRecordAfterDeleteSuccess(sites.VersionsCollection).BindFunc(func(e *core.RecordEvent) error {
		upkeep.MarkDue()
		return e.Next()
	})

	// Webhook events of deployments. deployment.updated fires when the
	// live content changes (a PUT, from the API or any other writer);
	// deployment.deleted is queued in the delete's own transaction, before
	// the cascade removes the webhooks, and its deliveries outlive it.
	app.OnRecordAfterUpdateSuccess(sites.DeploymentsCollection).BindFunc(func(e *core.RecordEvent) error {
		if dep := sites.DeploymentOf(e.Record); dep.Original().LiveVersion() != dep.LiveVersion() {
			live, _ := sites.FindVersionHead(e.App, e.Record.Id, dep.LiveVersion()) // nil: gone since
			if _, err := forms.EnqueueWebhooks(e.App, e.Record.Id, forms.EventDeploymentUpdated, ref(e.Record, live, true), nil); err != nil {
				e.App.Logger().Error("queue deployment.updated webhooks", "deployment", e.Record.Id, "error", err)
			}
			wake()
		}
		return e.Next()
	})
	// deployment.renamed fires when a site's slug changes, whoever
	// changed it: its payload names the new slug and URL.
	app.OnRecordAfterUpdateSuccess(sites.DeploymentsCollection).BindFunc(func(e *core.RecordEvent) error {
		if dep := sites.DeploymentOf(e.Record); dep.Original().Slug() != dep.Slug() {
			if _, err := forms.EnqueueWebhooks(e.App, e.Record.Id, forms.EventDeploymentRenamed, ref(e.Record, nil, false), nil); err != nil {
				e.App.Logger().Error("queue deployment.renamed webhooks", "deployment", e.Record.Id, "error", err)
			}
			wake()
		}
		return e.Next()
	})
	app.OnRecordDelete(sites.DeploymentsCollection).BindFunc(func(e *core.RecordEvent) error {
		err := sites.InEventTransaction(e, func(tx core.App) error {
			live, _ := sites.FindVersionHead(tx, e.Record.Id, sites.DeploymentOf(e.Record).LiveVersion()) // nil: none
			_, err := forms.EnqueueWebhooks(tx, e.Record.Id, forms.EventDeploymentDeleted, ref(e.Record, live, false), nil)
			return err
		})
		if err == nil {
			wake()
		}
		return err
	})

	// deployment.draft fires for a version committed without going live,
	// whoever saved it: once its transaction has committed, the
	// deployment's live pointer says whether it is a draft.
	app.OnRecordAfterCreateSuccess(sites.VersionsCollection).BindFunc(func(e *core.RecordEvent) error {
		dep, draft := sites.DraftOf(e)
		if !draft {
			return e.Next() // live (or gone): deployment.updated speaks for it
		}
		if _, err := forms.EnqueueWebhooks(e.App, dep.Id, forms.EventDeploymentDraft, ref(dep.Record, e.Record, true), nil); err != nil {
			e.App.Logger().Error("queue deployment.draft webhooks", "deployment", dep.Id, "error", err)
		}
		wake()
		return e.Next()
	})

	// Every account has a plan; free unless set.
	defaultPlan := func(e *core.RecordEvent) error {
		if u := accounts.UserOf(e.Record); u.Plan() == "" {
			u.SetPlan(sites.PlanFree)
		}
		return e.Next()
	}
	app.OnRecordCreate(accounts.UsersCollection).BindFunc(defaultPlan)
	app.OnRecordUpdate(accounts.UsersCollection).BindFunc(defaultPlan)
}
