package sites

import (
	"fmt"

	"github.com/pocketbase/dbx"
	"github.com/pocketbase/pocketbase/core"
)

// storageBatch is how many versions StorageBytes reads per query.
var storageBatch = 200

// StorageBytes is what owner's sites keep in the blob store: the sizes
// of the unique blobs that their versions reference, the live ones and
// every version kept (see ServiceConfig.KeepVersions), each blob counted
// once however many files, versions or sites of the account hold it
// (the rule is BlobSizes').
//
// A blob another account holds too counts fully for each: an account's
// storage is what it would take on an instance of its own, it does not
// shrink because a stranger uploaded the same file, and it never tells
// one account what another deployed.
//
// The cost is bounded by the account's versions (its plan's slots times
// KeepVersions, plus the versions aliases keep), read by id in batches
// of storageBatch: memory is one entry per unique blob.
func StorageBytes(app core.App, owner string) (int64, error) {
	sizes := map[string]int64{}
	after := ""
	for {
		var rows []struct {
			ID       string `db:"id"`
			Manifest string `db:"manifest"`
		}
		err := app.DB().NewQuery(
			"SELECT v.[[id]] AS [[id]], v.[[" + FieldVersionManifest + "]] AS [[manifest]]" +
				" FROM {{" + VersionsCollection + "}} v JOIN {{" + DeploymentsCollection + "}} d ON d.[[id]] = v.[[" + FieldVersionDeployment + "]]" +
				" WHERE d.[[" + FieldOwner + "]] = {:owner} AND v.[[id]] > {:after} ORDER BY v.[[id]] LIMIT {:l}").
			Bind(dbx.Params{"owner": owner, "after": after, "l": storageBatch}).All(&rows)
		if err != nil {
			return 0, fmt.Errorf("read the manifests of %s: %w", owner, err)
		}
		for _, r := range rows {
			m, err := ParseManifest([]byte(r.Manifest))
			if err != nil {
				return 0, fmt.Errorf("version %s: %w", r.ID, err)
			}
			m.BlobSizes(sizes)
		}
		if len(rows) < storageBatch {
			break
		}
		after = rows[len(rows)-1].ID
	}
	var n int64
	for _, s := range sizes {
		n += s
	}
	return n, nil
}

// BlobSizes adds the blobs m references to sizes, by hash: each file's
// blob and its precompressed variants, with their sizes. A file's Source
// (the bytes the client sent, kept when the server changed them) has no
// size in the manifest and is left out: it is the served file before a
// few head tags were added, so the served one stands for it.
func (m Manifest) BlobSizes(sizes map[string]int64) {
	for _, e := range m {
		sizes[e.Hash] = e.Size
		for _, v := range e.Encoded {
			sizes[v.Hash] = v.Size
		}
	}
}

// StorageStamp sums up owner's versions cheaply: it changes when a
// version is added (Newest), pruned or deleted with its site, or moves
// to or from the account with a claim (Versions, Bytes). Versions are
// never edited, so while the stamp holds, StorageBytes does too: a
// caller may keep StorageBytes' answer against it.
type StorageStamp struct {
	Versions int64  `db:"versions"`
	Newest   string `db:"newest"`
	Bytes    int64  `db:"bytes"`
}

// StorageStampOf is owner's StorageStamp: one indexed aggregate, no
// manifest read.
func StorageStampOf(app core.App, owner string) (StorageStamp, error) {
	var s StorageStamp
	err := app.DB().NewQuery(
		"SELECT COUNT(v.[[id]]) AS [[versions]], COALESCE(MAX(v.[[" + FieldVersionCreated + "]]), '') AS [[newest]], COALESCE(SUM(v.[[" + FieldVersionTotalBytes + "]]), 0) AS [[bytes]]" +
			" FROM {{" + VersionsCollection + "}} v JOIN {{" + DeploymentsCollection + "}} d ON d.[[id]] = v.[[" + FieldVersionDeployment + "]]" +
			" WHERE d.[[" + FieldOwner + "]] = {:owner}").
		Bind(dbx.Params{"owner": owner}).One(&s)
	if err != nil {
		return StorageStamp{}, fmt.Errorf("stamp the versions of %s: %w", owner, err)
	}
	return s, nil
}
