package statsdb

import (
	"fmt"
	"time"

	"github.com/pocketbase/dbx"
	"github.com/pocketbase/pocketbase/core"

	"sitedrop/sites"
)

// Traffic is what the sites of one deployment or one owner served over
// a period: page views (bots and previews apart, as in Report) and the
// body bytes of every answer.
type Traffic struct {
	// Key is the deployment's id (TopSites) or the owner's (TopOwners,
	// "" in OwnerTraffic).
	Key       string `db:"key"`
	PageViews int64  `db:"page_views"`
	Bytes     int64  `db:"bytes"`
}

// OwnerTraffic sums the rows of owner's deployments from from's UTC day
// to today. One indexed aggregate: the rows of a day are read once,
// whatever the number of sites.
func OwnerTraffic(app core.App, owner string, from time.Time) (Traffic, error) {
	var t Traffic
	err := app.DB().NewQuery(
		"SELECT '' AS [[key]], COALESCE(SUM(s.[[" + fieldPageViews + "]]), 0) AS [[page_views]], COALESCE(SUM(s.[[" + fieldBytes + "]]), 0) AS [[bytes]]" +
			" FROM {{" + CollectionName + "}} s JOIN {{" + sites.DeploymentsCollection + "}} d ON d.[[id]] = s.[[" + fieldDeployment + "]]" +
			" WHERE d.[[" + sites.FieldOwner + "]] = {:owner} AND s.[[" + fieldDate + "]] >= {:from}").
		Bind(dbx.Params{"owner": owner, "from": from.UTC().Format(time.DateOnly)}).One(&t)
	if err != nil {
		return Traffic{}, fmt.Errorf("sum the traffic of %s: %w", owner, err)
	}
	return t, nil
}

// TopSites is the n deployments that served the most bytes from from's
// UTC day on (page views break ties), most first.
func TopSites(app core.App, n int, from time.Time) ([]Traffic, error) {
	return top(app, "s.[["+fieldDeployment+"]]", "", n, from)
}

// TopOwners is the n accounts whose sites served the most bytes from
// from's UTC day on, most first; anonymous sites are left out.
func TopOwners(app core.App, n int, from time.Time) ([]Traffic, error) {
	return top(app, "d.[["+sites.FieldOwner+"]]", " AND d.[["+sites.FieldOwner+"]] != ''", n, from)
}

// top groups the period's rows by key (an expression on s, the rows, or
// d, their deployment) and keeps the n largest.
func top(app core.App, key, where string, n int, from time.Time) ([]Traffic, error) {
	out := []Traffic{}
	if n <= 0 {
		return out, nil
	}
	err := app.DB().NewQuery(
		"SELECT " + key + " AS [[key]], SUM(s.[[" + fieldPageViews + "]]) AS [[page_views]], SUM(s.[[" + fieldBytes + "]]) AS [[bytes]]" +
			" FROM {{" + CollectionName + "}} s JOIN {{" + sites.DeploymentsCollection + "}} d ON d.[[id]] = s.[[" + fieldDeployment + "]]" +
			" WHERE s.[[" + fieldDate + "]] >= {:from}" + where +
			" GROUP BY " + key + " ORDER BY [[bytes]] DESC, [[page_views]] DESC, [[key]] LIMIT {:n}").
		Bind(dbx.Params{"from": from.UTC().Format(time.DateOnly), "n": n}).All(&out)
	if err != nil {
		return nil, fmt.Errorf("rank the traffic: %w", err)
	}
	return out, nil
}
