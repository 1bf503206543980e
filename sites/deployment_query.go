package sites

import (
	"context"
	"errors"
	"fmt"

	"github.com/pocketbase/dbx"
	"github.com/pocketbase/pocketbase/core"
)

// FindDeploymentBySlug returns the deployment named slug, or an error
// that is ErrNotFound.
func FindDeploymentBySlug(app core.App, slug string) (*Deployment, error) {
	rec, err := app.FindFirstRecordByData(DeploymentsCollection, FieldSlug, slug)
	if err != nil {
		return nil, fmt.Errorf("deployment %q: %w", slug, errors.Join(ErrNotFound, err))
	}
	return DeploymentOf(rec), nil
}

// FindDeployment returns the deployment id, or an error that is
// ErrNotFound.
func FindDeployment(app core.App, id string) (*Deployment, error) {
	rec, err := app.FindRecordById(DeploymentsCollection, id)
	if err != nil {
		return nil, fmt.Errorf("deployment %q: %w", id, errors.Join(ErrNotFound, err))
	}
	return DeploymentOf(rec), nil
}

// DraftOf returns the deployment of the version that the record event e
// created when that version is not its live version (a draft: committed
// without going live); ok is false for a live version, or a deployment
// gone. For the hooks that run once a version's transaction has
// committed. A version its saver says went live (SavedLive) costs no
// read; otherwise the live pointer is read alone first, as it stands
// now: a deploy's version is nearly always the live one, and the whole
// record costs a deploy as much as two more statements.
func DraftOf(e *core.RecordEvent) (dep *Deployment, ok bool) {
	if SavedLive(e) {
		return nil, false
	}
	app, ver := e.App, e.Record
	depID := VersionOf(ver).DeploymentID()
	var live string
	err := app.DB().Select(FieldLiveVersion).From(DeploymentsCollection).
		Where(dbx.HashExp{"id": depID}).Limit(1).Row(&live)
	if err != nil || live == ver.Id {
		return nil, false
	}
	dep, err = FindDeployment(app, depID)
	if err != nil || dep.LiveVersion() == ver.Id {
		return nil, false
	}
	return dep, true
}

// SavedLive reports whether the version that the record event e created
// went live in the transaction that saved it: its saver supplied the
// deployment that transaction wrote (withSavedDeployment), and that row
// points at the version. For the hooks that run once a version's
// transaction has committed (e's context is the save's): a deploy's
// version is nearly always live, and DraftOf's read is then needless. A
// row a later transaction changes is not the question: whether the
// version was committed as a draft is.
func SavedLive(e *core.RecordEvent) bool {
	if e.Context == nil {
		return false
	}
	s, ok := e.Context.Value(savedForKey{}).(savedFor)
	return ok && s.rec == e.Record && s.dep.LiveVersion() == e.Record.Id
}

// savedForKey keys, on the context of a record event, the deployment
// that DeploymentOfSave read for the record the event saves, or that the
// saver supplied (withSavedDeployment).
type savedForKey struct{}

// savedFor is the deployment dep of rec, read by DeploymentOfSave or
// supplied by the saver.
type savedFor struct {
	rec *core.Record
	dep *Deployment
}

// withSavedDeployment is ctx carrying dep as the deployment of the
// version ver about to be saved with it, for DeploymentOfSave: for a
// caller that has just written or read dep in the save's transaction, so
// that the save's hooks need not read it again.
func withSavedDeployment(ctx context.Context, ver *core.Record, dep *Deployment) context.Context {
	return context.WithValue(ctx, savedForKey{}, savedFor{ver, dep})
}

// DeploymentOfSave returns the deployment of the version or alias that the
// record event e saves or deletes, or an error that is ErrNotFound. It is
// read once for all of the save's execute hooks (the site cache's
// bracket, the takedown check and a redeploy's audit entry each want it:
// one SQL statement less a deploy, two less a redeploy), or not at all
// when the saver supplied it (the service's saveVersion: see
// withSavedDeployment). The hooks run one inside the other around the
// writing of the record's row, in the save's transaction when it has
// one, and neither they nor the row write the deployment. Hooks that run
// after the save (its after-success hooks) must read it again with
// FindDeployment: by then a deploy has moved its live version.
func DeploymentOfSave(e *core.RecordEvent) (*Deployment, error) {
	id := DeploymentIDOf(e.Record)
	if e.Context != nil {
		if s, ok := e.Context.Value(savedForKey{}).(savedFor); ok && s.rec == e.Record && s.dep.Id == id {
			return s.dep, nil
		}
	}
	dep, err := FindDeployment(e.App, id)
	if err != nil {
		return nil, err
	}
	ctx := e.Context
	if ctx == nil {
		ctx = context.Background()
	}
	e.Context = context.WithValue(ctx, savedForKey{}, savedFor{e.Record, dep})
	return dep, nil
}

// FindVersionOf returns the version versionID if it belongs to the
// deployment depID, or an error that is ErrNotFound.
func FindVersionOf(app core.App, depID, versionID string) (*core.Record, error) {
	v, err := app.FindRecordById(VersionsCollection, versionID)
	if err != nil {
		return nil, fmt.Errorf("version %q: %w", versionID, errors.Join(ErrNotFound, err))
	}
	if v.GetString(FieldVersionDeployment) != depID {
		return nil, fmt.Errorf("version %q of another deployment: %w", versionID, ErrNotFound)
	}
	return v, nil
}

// FindVersionHead is FindVersionOf without the version's manifest (its
// largest field by far: tens of kilobytes of JSON for a site of a
// thousand files, read and parsed for nothing by a caller that wants the
// number). The record is for reading only: saved, it would lose its
// manifest.
func FindVersionHead(app core.App, depID, versionID string) (*core.Record, error) {
	v := &core.Record{}
	err := app.RecordQuery(VersionsCollection).
		Select("id", FieldVersionDeployment, FieldVersionNumber, FieldVersionFileCount, FieldVersionTotalBytes,
			FieldVersionMessage, FieldVersionCreated, FieldVersionIsSPA, FieldVersionTitle, FieldVersionDescription,
			FieldVersionFavicon, FieldVersionStorageType).
		AndWhere(dbx.HashExp{"id": versionID}).Limit(1).One(v)
	if err != nil {
		return nil, fmt.Errorf("version %q: %w", versionID, errors.Join(ErrNotFound, err))
	}
	if v.GetString(FieldVersionDeployment) != depID {
		return nil, fmt.Errorf("version %q of another deployment: %w", versionID, ErrNotFound)
	}
	return v, nil
}

// AllSlugs returns the slugs of every deployment.
func AllSlugs(app core.App) ([]string, error) {
	var slugs []string
	q := app.DB().Select(FieldSlug).From(DeploymentsCollection)
	if err := q.Column(&slugs); err != nil {
		return nil, fmt.Errorf("list deployment slugs: %w", err)
	}
	return slugs, nil
}

// DeploymentIDOf returns the id of the deployment a version or an alias
// record belongs to ("" for a record of another collection).
func DeploymentIDOf(rec *core.Record) string {
	switch rec.Collection().Name {
	case VersionsCollection:
		return rec.GetString(FieldVersionDeployment)
	case AliasesCollection:
		return rec.GetString(FieldAliasDeployment)
	}
	return ""
}
