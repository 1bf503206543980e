package sites

import (
	"errors"
	"fmt"
	"strings"

	"github.com/pocketbase/dbx"
	"github.com/pocketbase/pocketbase/core"
)

// ValidateAlias checks an alias name (see ValidAlias: 1 to 32 of
// [a-z0-9-], starting and ending with a letter or digit, without "--",
// the separator of a preview host's label and slug, and not of a
// version's form v<digits>), saying what is wrong: a *FieldError naming
// "alias".
func ValidateAlias(name string) error {
	if ValidAlias(name) {
		return nil
	}
	msg := "alias may contain only lowercase letters, digits and single hyphens, and must start and end with a letter or digit"
	switch {
	case name == "":
		msg = "alias must not be empty"
	case len(name) > AliasMaxLen:
		msg = fmt.Sprintf("alias is too long: at most %d characters", AliasMaxLen)
	case strings.Contains(name, PreviewSep) && !strings.HasPrefix(name, "-") && !strings.HasSuffix(name, "-"):
		msg = `alias must not contain "--"`
	case versionShaped(name):
		msg = "alias must not be v followed by digits: that names a version"
	}
	return &FieldError{Field: "alias", Msg: msg}
}

// MaxAliases is how many aliases a deployment may have: each keeps its
// version from pruning, so they are bounded as versions are.
const MaxAliases = 20

// Alias is one alias of a deployment: its name and the number of the
// version it points at.
type Alias struct {
	Name    string
	Version int
}

// FindAliasVersion returns the version the alias name of the deployment
// depID points at, or an error that is ErrNotFound (and ErrAliasNotFound)
// when there is no such alias.
func FindAliasVersion(app core.App, depID, name string) (*core.Record, error) {
	a, err := findAlias(app, depID, name)
	if err != nil {
		return nil, err
	}
	v, err := app.FindRecordById(VersionsCollection, a.GetString(FieldAliasVersion))
	if err != nil {
		return nil, fmt.Errorf("version of alias %q: %w", name, errors.Join(ErrNotFound, ErrAliasNotFound, err))
	}
	return v, nil
}

// findAlias is the aliases record name of the deployment depID; an error
// that is ErrNotFound and ErrAliasNotFound when there is none.
func findAlias(app core.App, depID, name string) (*core.Record, error) {
	a, err := app.FindFirstRecordByFilter(AliasesCollection, FieldAliasDeployment+" = {:d} && "+FieldAliasName+" = {:n}",
		dbx.Params{"d": depID, "n": name})
	if err != nil {
		return nil, fmt.Errorf("alias %q: %w", name, errors.Join(ErrNotFound, ErrAliasNotFound, err))
	}
	return a, nil
}

// ListAliases returns the aliases of dep, by name.
func (s *Service) ListAliases(dep *core.Record) ([]Alias, error) {
	return listAliases(s.app, dep.Id)
}

// listAliases returns the aliases of the deployment depID, by name.
func listAliases(app core.App, depID string) ([]Alias, error) {
	var rows []struct {
		Name   string `db:"name"`
		Number int    `db:"number"`
	}
	err := app.DB().NewQuery("SELECT a.[[name]] AS name, v.[[number]] AS number FROM {{" + AliasesCollection + "}} a " +
		"JOIN {{" + VersionsCollection + "}} v ON v.[[id]] = a.[[version]] WHERE a.[[deployment]] = {:d} ORDER BY a.[[name]]").
		Bind(dbx.Params{"d": depID}).All(&rows)
	if err != nil {
		return nil, fmt.Errorf("list aliases: %w", err)
	}
	out := make([]Alias, len(rows))
	for i, r := range rows {
		out[i] = Alias{Name: r.Name, Version: r.Number}
	}
	return out, nil
}

// DeleteAlias deletes the alias name of dep: its preview host stops
// serving; the version stays (and may be pruned). An error that is
// ErrAliasNotFound when dep has no such alias.
func (s *Service) DeleteAlias(dep *core.Record, name string) error {
	unlock := s.lockDeployment(dep.Id)
	defer unlock()
	a, err := findAlias(s.app, dep.Id, name)
	if err != nil {
		return err
	}
	if err := s.app.Delete(a); err != nil {
		return fmt.Errorf("delete alias %q: %w", name, err)
	}
	return nil
}

// setAlias points the alias name of the deployment depID at versionID,
// creating it if needed (within MaxAliases: a *FieldError beyond), within
// tx.
func setAlias(tx core.App, depID, name, versionID string) error {
	a, err := findAlias(tx, depID, name)
	if err != nil {
		n, cerr := tx.CountRecords(AliasesCollection, dbx.HashExp{FieldAliasDeployment: depID})
		if cerr != nil {
			return fmt.Errorf("count aliases: %w", cerr)
		}
		if n >= MaxAliases {
			return &FieldError{Field: "alias", Msg: fmt.Sprintf("alias: a deployment has at most %d aliases; delete one first (DELETE /deploy/{id}/aliases/{name})", MaxAliases)}
		}
		col, cerr := tx.FindCachedCollectionByNameOrId(AliasesCollection)
		if cerr != nil {
			return fmt.Errorf("find aliases collection: %w", cerr)
		}
		a = core.NewRecord(col)
		a.Set(FieldAliasDeployment, depID)
		a.Set(FieldAliasName, name)
	}
	a.Set(FieldAliasVersion, versionID)
	if err := tx.Save(a); err != nil {
		return fmt.Errorf("save alias %q: %w", name, err)
	}
	return nil
}

// CheckAlias is the lifecycle rule of an aliases record, whichever
// writer saves it (the API, the admin dashboard): a valid name, and a
// version of the alias's own deployment. The record hooks call it.
func CheckAlias(app core.App, rec *core.Record) error {
	if err := ValidateAlias(rec.GetString(FieldAliasName)); err != nil {
		return err
	}
	if _, err := FindVersionHead(app, rec.GetString(FieldAliasDeployment), rec.GetString(FieldAliasVersion)); err != nil {
		return &FieldError{Field: FieldAliasVersion, Msg: "version must be one of the alias's deployment's versions"}
	}
	return nil
}
