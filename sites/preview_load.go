package sites

import (
	"fmt"
	"time"

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
		// a renamed site's old slug: the same preview of the new one
		return movedSite(app, slug, version+alias, time.Now())
	}
	var ver *core.Record
	if alias != "" {
		ver, err = FindAliasVersion(app, rec.Id, alias)
	} else {
		ver, err = FindVersionByNumber(app, rec.Id, n)
	}
	if err != nil {
		return nil, err
	}
	m, err := ParseManifest([]byte(ver.GetString(FieldVersionManifest)))
	if err != nil {
		return nil, fmt.Errorf("manifest of %s: %w", label, err)
	}
	site := &Site{
		ID:            rec.Id,
		Slug:          slug,
		Status:        rec.GetString(FieldStatus),
		Paused:        rec.GetBool(FieldPaused),
		AwaitingClaim: rec.GetBool(FieldAwaitingClaim),
		TakenDown:     rec.GetString(FieldTakedownReason),
		IsSPA:         ver.GetBool(FieldVersionIsSPA),
		VersionID:     ver.Id,
		Protection:    ProtectionOf(rec),
		Preview:       version + alias,
		Files:         m,
	}
	if exp := rec.GetDateTime(FieldExpiresAt); !exp.IsZero() {
		site.ExpiresAt = exp.Time()
	}
	return site, nil
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
	aliases, err := listAliases(app, depID)
	if err != nil {
		return nil, fmt.Errorf("the aliases of %s: %w", slug, err)
	}
	for _, a := range aliases {
		if l := AliasLabel(slug, a.Name); l != "" {
			out = append(out, l)
		}
	}
	return out, nil
}
