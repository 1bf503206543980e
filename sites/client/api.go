package client

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"sitedrop/sites/wire"
)

// Archive is a zip or tar.gz archive deployed as it is, its metadata in
// the query.
type Archive struct {
	Body        Sized
	ContentType string // "application/zip" or "application/gzip"
	Slug, Title string // "" to leave out
	IsSPA       *bool  // nil to leave out
	Password    string // "" to leave out; sent in a header, not the query
	Protect     *bool  // nil to leave out
	// Draft saves the version without making it live (a keyed deploy).
	Draft bool
	// Alias and Message are the deploy's alias and message; "" to leave
	// out.
	Alias, Message string
}

// deployTarget is the method and path that create a deployment (id "")
// or update the deployment id.
func deployTarget(id string) (method, path string) {
	if id == "" {
		return "POST", "/deploy"
	}
	return "PUT", "/deploy/" + url.PathEscape(id)
}

// Deploy creates a deployment (id "") or updates the deployment id with
// req. Without a key the deployment is anonymous (its answer's Claim is
// set) and its files must be inline. A deploy naming content the server
// lacks is refused with a 400 *Error: upload it and deploy again. An
// update (id set) sends no Slug.
func (c *Client) Deploy(id string, req *wire.DeployRequest) (*wire.DeployAnswer, error) {
	method, path := deployTarget(id)
	var ans wire.DeployAnswer
	if err := c.Do(method, path, req, "", &ans); err != nil {
		return nil, err
	}
	return &ans, nil
}

// DeployArchive creates a deployment (id "") or updates the deployment id
// with the files of an archive, streamed.
func (c *Client) DeployArchive(id string, a Archive) (*wire.DeployAnswer, error) {
	method, path := deployTarget(id)
	q := url.Values{}
	if a.Slug != "" {
		q.Set("slug", a.Slug)
	}
	if a.Title != "" {
		q.Set("title", a.Title)
	}
	if a.IsSPA != nil {
		q.Set("is_spa", fmt.Sprint(*a.IsSPA))
	}
	if a.Protect != nil {
		q.Set("protect", fmt.Sprint(*a.Protect))
	}
	if a.Draft {
		q.Set("draft", "true")
	}
	if a.Alias != "" {
		q.Set("alias", a.Alias)
	}
	if a.Message != "" {
		q.Set("message", a.Message)
	}
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	body := a.Body
	if a.Password != "" {
		body.Header = http.Header{"X-Sitedrop-Password": {a.Password}}
	}
	var ans wire.DeployAnswer
	if err := c.Do(method, path, body, a.ContentType, &ans); err != nil {
		return nil, err
	}
	return &ans, nil
}

// Missing returns which of the contents named by their SHA-256 (hex) the
// server lacks.
func (c *Client) Missing(hashes []string) ([]string, error) {
	var ans wire.Missing
	if err := c.Do("POST", "/blobs/missing", wire.MissingRequest{Hashes: hashes}, "", &ans); err != nil {
		return nil, err
	}
	return ans.Missing, nil
}

// UploadBlob sends body as the content whose SHA-256 is hash (hex). The
// server checks the hash: other bytes are refused with a 400 *Error.
// Cancelling ctx abandons the upload. It is safe to call concurrently.
func (c *Client) UploadBlob(ctx context.Context, hash string, body Sized) error {
	return c.DoContext(ctx, "PUT", "/blobs/"+hash, body, "application/octet-stream", nil)
}

// List returns the caller's deployments.
func (c *Client) List() ([]wire.DeploySummary, error) {
	var ans wire.DeploymentList
	if err := c.Do("GET", "/deploys", nil, "", &ans); err != nil {
		return nil, err
	}
	return ans.Deployments, nil
}

// Delete deletes the deployment id and returns the server's message.
func (c *Client) Delete(id string) (string, error) {
	var ans wire.IDMessage
	if err := c.Do("DELETE", "/deploy/"+url.PathEscape(id), nil, "", &ans); err != nil {
		return "", err
	}
	return ans.Message, nil
}

// Versions returns the kept versions of the deployment id, newest first.
func (c *Client) Versions(id string) ([]wire.Version, error) {
	var ans wire.VersionList
	if err := c.Do("GET", "/deploy/"+url.PathEscape(id)+"/versions", nil, "", &ans); err != nil {
		return nil, err
	}
	return ans.Versions, nil
}

// Rollback makes the kept version of the deployment id live again.
func (c *Client) Rollback(id string, version int) (*wire.Rollback, error) {
	var ans wire.Rollback
	if err := c.Do("POST", "/deploy/"+url.PathEscape(id)+"/rollback", wire.RollbackRequest{Version: &version}, "", &ans); err != nil {
		return nil, err
	}
	return &ans, nil
}

// versionPath is the path of the kept version n of the deployment id.
func versionPath(id string, n int) string {
	return "/deploy/" + url.PathEscape(id) + "/versions/" + strconv.Itoa(n)
}

// Promote makes the kept version n of the deployment id live (a draft,
// or an earlier version); its aliases stay where they are.
func (c *Client) Promote(id string, n int) (*wire.Promote, error) {
	var ans wire.Promote
	if err := c.Do("POST", versionPath(id, n)+"/promote", nil, "", &ans); err != nil {
		return nil, err
	}
	return &ans, nil
}

// Aliases returns the aliases of the deployment id, by name.
func (c *Client) Aliases(id string) ([]wire.Alias, error) {
	var ans wire.AliasList
	if err := c.Do("GET", "/deploy/"+url.PathEscape(id)+"/aliases", nil, "", &ans); err != nil {
		return nil, err
	}
	return ans.Aliases, nil
}

// DeleteAlias deletes the alias name of the deployment id (its version
// stays) and returns the server's message.
func (c *Client) DeleteAlias(id, name string) (string, error) {
	var ans wire.AliasDeleted
	if err := c.Do("DELETE", "/deploy/"+url.PathEscape(id)+"/aliases/"+url.PathEscape(name), nil, "", &ans); err != nil {
		return "", err
	}
	return ans.Message, nil
}

// VersionFiles returns the files of the kept version n of the deployment
// id, by path.
func (c *Client) VersionFiles(id string, n int) ([]wire.VersionFile, error) {
	var ans wire.VersionFiles
	if err := c.Do("GET", versionPath(id, n)+"/files", nil, "", &ans); err != nil {
		return nil, err
	}
	return ans.Files, nil
}

// Diff returns what version to of the deployment id adds, changes and
// removes compared with version from.
func (c *Client) Diff(id string, from, to int) (*wire.Diff, error) {
	var ans wire.Diff
	q := url.Values{"from": {strconv.Itoa(from)}, "to": {strconv.Itoa(to)}}
	if err := c.Do("GET", "/deploy/"+url.PathEscape(id)+"/diff?"+q.Encode(), nil, "", &ans); err != nil {
		return nil, err
	}
	return &ans, nil
}

// RequestCode asks the server to send a sign-in code to email and
// returns the id of that code, which Verify takes.
func (c *Client) RequestCode(email string) (string, error) {
	var ans struct {
		OTPID string `json:"otp_id"`
	}
	if err := c.Do("POST", "/auth/otp", map[string]string{"email": email}, "", &ans); err != nil {
		return "", err
	}
	return ans.OTPID, nil
}

// Verify signs in with the code sent for otpID and returns the API key
// the server made.
func (c *Client) Verify(otpID, code string) (string, error) {
	var ans struct {
		APIKey string `json:"api_key"`
	}
	if err := c.Do("POST", "/auth/verify", map[string]string{"otp_id": otpID, "code": code}, "", &ans); err != nil {
		return "", err
	}
	return ans.APIKey, nil
}
