package client

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
)

// DeployRequest is the JSON body of a deploy (POST /deploy) or an update
// (PUT /deploy/{id}). Empty fields are left out: an update keeps what
// they would set. (The fields are in the order encoding/json gives a
// map's keys.)
type DeployRequest struct {
	Files []File `json:"files"`
	// IsSPA, when not nil, turns single-page-app serving on or off.
	IsSPA *bool `json:"is_spa,omitempty"`
	// Password, when not nil, protects the site with it.
	Password *string `json:"password,omitempty"`
	// Protect, when not nil, turns the site's share link on or off.
	Protect *bool  `json:"protect,omitempty"`
	Slug    string `json:"slug,omitempty"`
	Title   string `json:"title,omitempty"`
}

// File is one file of a DeployRequest: its site path and either SHA256,
// naming content on the server (see Missing and UploadBlob), or Content
// inline.
type File struct {
	// Content is the bytes, as text or in Encoding; a pointer to "" is an
	// empty file, nil is no inline content.
	Content  *string `json:"content,omitempty"`
	Encoding string  `json:"encoding,omitempty"` // "base64" or "" (text)
	Path     string  `json:"path"`
	SHA256   string  `json:"sha256,omitempty"`
}

// Archive is a zip or tar.gz archive deployed as it is, its metadata in
// the query.
type Archive struct {
	Body        Sized
	ContentType string // "application/zip" or "application/gzip"
	Slug, Title string // "" to leave out
	IsSPA       *bool  // nil to leave out
	Password    string // "" to leave out; sent in a header, not the query
	Protect     *bool  // nil to leave out
}

// Deployment is a deployment as the API describes it: in the answer of a
// deploy (ClaimURL and ExpiresAt are set for an anonymous one) or in the
// list of the caller's deployments (Title, UpdatedAt).
type Deployment struct {
	ID        string `json:"id"`
	Slug      string `json:"slug"`
	URL       string `json:"url"`
	Title     string `json:"title"`
	UpdatedAt string `json:"updated_at"`
	ClaimURL  string `json:"claim_url"`
	ExpiresAt string `json:"expires_at"`
	// ShareURL is the share link of a protected site whose link is on
	// (a deploy's answer only).
	ShareURL string `json:"share_url"`
	// Warnings are the lines of the site's _redirects and _headers that
	// the server will not apply (a deploy's answer only).
	Warnings []Warning `json:"warnings"`
	// Report is the site's quality report (a deploy's answer only).
	Report Report `json:"report"`
}

// Report is a deploy's quality report: what a visitor of the site would
// meet. Each list holds at most 100 entries; Truncated tells that some
// were left out.
type Report struct {
	BrokenLinks   []BrokenLink  `json:"broken_links"`
	Forms         []FormProblem `json:"forms"`
	Rules         []RuleProblem `json:"rules"`
	UntitledPages []string      `json:"untitled_pages"`
	LargeImages   []LargeImage  `json:"large_images"`
	Truncated     bool          `json:"truncated"`
}

// BrokenLink is a link of Page (a file) to Target, a path of the site
// that the site does not serve.
type BrokenLink struct {
	Page   string `json:"page"`
	Target string `json:"target"`
}

// FormProblem is a form of Page whose submissions go nowhere.
type FormProblem struct {
	Page    string `json:"page"`
	Problem string `json:"problem"`
}

// RuleProblem is a line of _redirects or _headers that is not applied.
type RuleProblem struct {
	File    string `json:"file"`
	Line    int    `json:"line"`
	Message string `json:"message"`
}

// LargeImage is an image over 1 MiB.
type LargeImage struct {
	Path string `json:"path"`
	Size int64  `json:"size"`
}

// Warning is a line of a site's _redirects or _headers that is not
// applied, and why.
type Warning struct {
	File   string `json:"file"`
	Line   int    `json:"line"`
	Text   string `json:"text"`
	Reason string `json:"reason"`
}

// Version is one kept version of a deployment.
type Version struct {
	Version    int    `json:"version"`
	CreatedAt  string `json:"created_at"`
	FileCount  int    `json:"file_count"`
	TotalBytes int64  `json:"total_bytes"`
	Live       bool   `json:"live"`
}

// Rollback is the answer of a rollback: the deployment and the version
// now live.
type Rollback struct {
	ID      string `json:"id"`
	Slug    string `json:"slug"`
	URL     string `json:"url"`
	Version int    `json:"version"`
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
// req. Without a key the deployment is anonymous and its files must be
// inline. A deploy naming content the server lacks is refused with a 400
// *Error: upload it and deploy again.
func (c *Client) Deploy(id string, req *DeployRequest) (*Deployment, error) {
	method, path := deployTarget(id)
	var ans Deployment
	if err := c.Do(method, path, req, "", &ans); err != nil {
		return nil, err
	}
	return &ans, nil
}

// DeployArchive creates a deployment (id "") or updates the deployment id
// with the files of an archive, streamed.
func (c *Client) DeployArchive(id string, a Archive) (*Deployment, error) {
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
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	body := a.Body
	if a.Password != "" {
		body.Header = http.Header{"X-Sitedrop-Password": {a.Password}}
	}
	var ans Deployment
	if err := c.Do(method, path, body, a.ContentType, &ans); err != nil {
		return nil, err
	}
	return &ans, nil
}

// Missing returns which of the contents named by their SHA-256 (hex) the
// server lacks.
func (c *Client) Missing(hashes []string) ([]string, error) {
	var ans struct {
		Missing []string `json:"missing"`
	}
	if err := c.Do("POST", "/blobs/missing", map[string]any{"hashes": hashes}, "", &ans); err != nil {
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
func (c *Client) List() ([]Deployment, error) {
	var ans struct {
		Deployments []Deployment `json:"deployments"`
	}
	if err := c.Do("GET", "/deploys", nil, "", &ans); err != nil {
		return nil, err
	}
	return ans.Deployments, nil
}

// Delete deletes the deployment id and returns the server's message.
func (c *Client) Delete(id string) (string, error) {
	var ans struct {
		Message string `json:"message"`
	}
	if err := c.Do("DELETE", "/deploy/"+url.PathEscape(id), nil, "", &ans); err != nil {
		return "", err
	}
	return ans.Message, nil
}

// Versions returns the kept versions of the deployment id, newest first.
func (c *Client) Versions(id string) ([]Version, error) {
	var ans struct {
		Versions []Version `json:"versions"`
	}
	if err := c.Do("GET", "/deploy/"+url.PathEscape(id)+"/versions", nil, "", &ans); err != nil {
		return nil, err
	}
	return ans.Versions, nil
}

// Rollback makes the kept version of the deployment id live again.
func (c *Client) Rollback(id string, version int) (*Rollback, error) {
	var ans Rollback
	if err := c.Do("POST", "/deploy/"+url.PathEscape(id)+"/rollback", map[string]int{"version": version}, "", &ans); err != nil {
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
