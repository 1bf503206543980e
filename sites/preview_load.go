package sites

import (
	"database/sql"
	"errors"
	"fmt"

	"github.com/pocketbase/dbx"
	"github.com/pocketbase/pocketbase/core"
)

// LoadPreview reads what the site server needs to serve the preview host
// label ("v12--my-site", "staging--my-site"): the deployment, as
// LoadSite reads it, with the manifest of the version the label names
// and Preview set to the label's first part. It returns ErrNotFound when
// label is not a preview label, or names no deployment, no kept version
// or no alias: an unknown preview is never served another version.
func LoadPreview(app core.App, label string) (*Site, error) {
	slug, version, n, alias, ok := ParsePreviewLabel(label)
	if !ok {
		return nil, ErrNotFound
	}
	rec, err := app.FindFirstRecordByData(DeploymentsCollection, FieldSlug, slug)
	if err != nil {
		return nil, ErrNotFound
	}
	var ver *core.Record
	if alias != "" {
		ver, err = findAliasVersion(app, rec.Id, alias)
	} else {
		ver, err = findVersionByNumber(app, rec.Id, n)
	}
	if err != nil {
		return nil, err
	}
	m, err := ParseManifest([]byte(ver.GetString(FieldVersionManifest)))
	if err != nil {
		return nil, fmt.Errorf("manifest of %s: %w", label, err)
	}
	site := &Site{
		ID:         rec.Id,
		Slug:       slug,
		Status:     rec.GetString(FieldStatus),
		IsSPA:      versionIsSPA(rec, ver),
		VersionID:  ver.Id,
		Protection: ProtectionOf(rec),
		Preview:    version + alias,
		Files:      m,
	}
	if exp := rec.GetDateTime(FieldExpiresAt); !exp.IsZero() {
		site.ExpiresAt = exp.Time()
	}
	return site, nil
}

// versionSPAField is the SPA setting a version record may carry of its
// own; without it a version has the deployment's.
const versionSPAField = "is_spa"

// versionIsSPA is ver's SPA setting: its own when versions record one,
// else the deployment's.
func versionIsSPA(dep, ver *core.Record) bool {
	if ver.Collection().Fields.GetByName(versionSPAField) != nil {
		return ver.GetBool(versionSPAField)
	}
	return dep.GetBool(FieldIsSPA)
}

// PreviewLabels are the preview host labels of the deployment depID whose
// slug is slug: one per kept version and one per alias (those too long
// for a DNS label left out), newest version first. The publisher
// publishes a document for each, so replicas serve them.
func PreviewLabels(app core.App, depID, slug string) ([]string, error) {
	var nums []int
	err := app.DB().Select(FieldVersionNumber).From(VersionsCollection).
		Where(dbx.HashExp{FieldVersionDeployment: depID}).OrderBy(FieldVersionNumber + " DESC").Column(&nums)
	if err != nil {
		return nil, fmt.Errorf("list the versions of %s: %w", slug, err)
	}
	var out []string
	for _, n := range nums {
		if l := PreviewLabel(slug, n); l != "" {
			out = append(out, l)
		}
	}
	if _, err := app.FindCachedCollectionByNameOrId(aliasesCollection); err != nil {
		return out, nil // no aliases collection (yet)
	}
	var names []string
	err = app.DB().Select(aliasNameField).From(aliasesCollection).
		Where(dbx.HashExp{aliasDeploymentField: depID}).OrderBy(aliasNameField).Column(&names)
	if err != nil {
		return nil, fmt.Errorf("list the aliases of %s: %w", slug, err)
	}
	for _, a := range names {
		if l := AliasLabel(slug, a); l != "" {
			out = append(out, l)
		}
	}
	return out, nil
}

// The aliases collection, as decided for issue 29 (deployment, name,
// version).
const (
	aliasesCollection    = "aliases"
	aliasDeploymentField = "deployment"
	aliasNameField       = "name"
	aliasVersionField    = "version"
)

// findVersionByNumber is version n of the deployment depID; ErrNotFound
// when it is not kept.
func findVersionByNumber(app core.App, depID string, n int) (*core.Record, error) {
	v, err := app.FindFirstRecordByFilter(VersionsCollection,
		FieldVersionDeployment+" = {:d} && "+FieldVersionNumber+" = {:n}", dbx.Params{"d": depID, "n": n})
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("version %d: %w", n, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("find version %d: %w", n, err)
	}
	return v, nil
}

// findAliasVersion is the version the alias name of the deployment depID
// points at; ErrNotFound when there is no such alias.
func findAliasVersion(app core.App, depID, name string) (*core.Record, error) {
	if _, err := app.FindCachedCollectionByNameOrId(aliasesCollection); err != nil {
		return nil, fmt.Errorf("alias %q: %w", name, ErrNotFound)
	}
	a, err := app.FindFirstRecordByFilter(aliasesCollection,
		aliasDeploymentField+" = {:d} && "+aliasNameField+" = {:n}", dbx.Params{"d": depID, "n": name})
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("alias %q: %w", name, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("find alias %q: %w", name, err)
	}
	v, err := app.FindRecordById(VersionsCollection, a.GetString(aliasVersionField))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("alias %q: its version: %w", name, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("find the version of alias %q: %w", name, err)
	}
	return v, nil
}
