package sites

import (
	"errors"

	"github.com/pocketbase/pocketbase/core"
)

// FindLiveVersion returns what the site dep serves: its live version
// (without its aliases), or nil when it has none. One query, for a page
// that shows the live version alone (ListVersions reads them all).
func FindLiveVersion(app core.App, dep *core.Record) (*VersionInfo, error) {
	id := DeploymentOf(dep).LiveVersion()
	if id == "" {
		return nil, nil
	}
	v, err := FindVersionHead(app, dep.Id, id)
	if errors.Is(err, ErrNotFound) {
		return nil, nil // deleted with its site meanwhile
	} else if err != nil {
		return nil, err
	}
	return &VersionInfo{
		Number:     v.GetInt(FieldVersionNumber),
		Created:    v.GetDateTime(FieldCreated).Time(),
		FileCount:  v.GetInt(FieldVersionFileCount),
		TotalBytes: int64(v.GetInt(FieldVersionTotalBytes)),
		Live:       true,
		Message:    v.GetString(FieldVersionMessage),
	}, nil
}
