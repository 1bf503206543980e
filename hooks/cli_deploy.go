package hooks

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"sitedrop/sites"
	"sitedrop/sites/store"
)

// localFile is a file of the folder being deployed. Its bytes stay on
// disk: they are hashed as a stream and read again only to be uploaded,
// so a large site does not have to fit in memory.
type localFile struct {
	path string // site path, slash-separated
	src  string // the file on disk
	size int64
	hash string
}

// deployOptions are the flags of `sitedrop deploy`.
type deployOptions struct {
	server, key, slug, title, id string
	spa                          bool
}

// NewDeployCommand is `sitedrop deploy PATH`: a folder, an HTML file or a
// zip/tar.gz archive. With a key it uploads only the contents the server
// lacks (the digest protocol); without one it makes an anonymous
// deployment with the bytes inline.
func NewDeployCommand() *cobra.Command {
	var o deployOptions
	c := &cobra.Command{
		Use:   "deploy PATH",
		Short: "Deploy a folder, an HTML file or an archive to a sitedrop server",
		Long: `Deploy a folder, an HTML file or a zip/tar.gz archive and print the site's URL.

With a key (--key, SITEDROP_KEY, or the one saved by "sitedrop login"),
files are hashed locally and only the contents the server does not have
are uploaded; --id updates that deployment instead of creating one.
Without a key the deployment is anonymous and expires unless claimed.
Files and folders whose names start with "." are skipped (.well-known
excepted). A link to a file of the folder is deployed as that file; other
links are skipped, with a warning.`,
		Args:         cobra.ExactArgs(1),
		SilenceUsage: true,
		Annotations:  map[string]string{NoBootstrapAnnotation: "true"},
		RunE: func(c *cobra.Command, args []string) error {
			api, err := newAPIClient(o.server, o.key)
			if err != nil {
				return err
			}
			return runDeploy(c, api, o, args[0])
		},
	}
	clientFlags(c, &o.server, &o.key)
	c.Flags().StringVar(&o.slug, "slug", "", "the site's slug (new deployments; default: generated)")
	c.Flags().StringVar(&o.title, "title", "", "the site's title")
	c.Flags().BoolVar(&o.spa, "spa", false, "serve index.html for unknown paths (single-page app)")
	c.Flags().StringVar(&o.id, "id", "", "update this deployment instead of creating one")
	return c
}

// clientFlags adds --server and --key.
func clientFlags(c *cobra.Command, server, key *string) {
	c.Flags().StringVar(server, "server", "", "server URL (default: $SITEDROP_SERVER, the saved login's, or "+defaultServer+")")
	c.Flags().StringVar(key, "key", "", "API key (default: $SITEDROP_KEY or the saved login's)")
}

// deployAnswer is what create, update and anonymous create return.
type deployAnswer struct {
	ID        string `json:"id"`
	Slug      string `json:"slug"`
	URL       string `json:"url"`
	ClaimURL  string `json:"claim_url"`
	ExpiresAt string `json:"expires_at"`
}

// runDeploy deploys target: it picks the deployment to update (--id, or
// the caller's own --slug) and prints the URL on stdout, the rest on
// stderr.
func runDeploy(c *cobra.Command, api *apiClient, o deployOptions, target string) error {
	out, errOut := c.OutOrStdout(), c.ErrOrStderr()
	if o.id != "" && api.key == "" {
		return fmt.Errorf("--id: %w", errNoKey)
	}
	if o.id == "" && o.slug != "" && api.key != "" {
		// deploying to one's own slug again updates that site, as
		// surge.sh does: scripts need not keep its id
		id, err := ownDeploymentID(api, o.slug)
		if err != nil {
			return err
		}
		if id != "" {
			o.id = id
			fmt.Fprintf(errOut, "Updating %s (deployment %s)\n", o.slug, termSafe(id))
		}
	}
	method, path := "POST", "/deploy"
	if o.id != "" {
		method, path = "PUT", "/deploy/"+url.PathEscape(o.id)
	}
	var ans *deployAnswer
	var err error
	if format := archiveOfPath(target); format != "" {
		ans, err = deployArchive(api, method, path, format, target, o, c.Flags().Changed("spa"))
	} else {
		ans, err = deployFolder(api, method, path, target, o, c.Flags().Changed("spa"), errOut)
	}
	if err != nil {
		return err
	}
	fmt.Fprintln(out, termSafe(ans.URL))
	if ans.ClaimURL != "" {
		fmt.Fprintf(errOut, "Anonymous deployment %s: it expires at %s unless claimed at\n%s\n", termSafe(ans.ID), termSafe(ans.ExpiresAt), termSafe(ans.ClaimURL))
	} else {
		fmt.Fprintf(errOut, "Deployment %s (%s)\n", termSafe(ans.ID), termSafe(ans.Slug))
	}
	return nil
}

// deployArchive sends a zip or tar.gz archive as it is, streamed from
// disk, with the metadata in the query. spaSet tells that --spa was given.
func deployArchive(api *apiClient, method, path, format, target string, o deployOptions, spaSet bool) (*deployAnswer, error) {
	archive, err := openSized(target)
	if err != nil {
		return nil, err
	}
	defer archive.Close()
	q := url.Values{}
	if o.slug != "" && o.id == "" {
		q.Set("slug", o.slug)
	}
	if o.title != "" {
		q.Set("title", o.title)
	}
	if spaSet {
		q.Set("is_spa", fmt.Sprint(o.spa))
	}
	ct := "application/zip"
	if format == sites.ArchiveTarGz {
		ct = "application/gzip"
	}
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	var ans deployAnswer
	if err := api.call(method, path, archive, ct, &ans); err != nil {
		return nil, err
	}
	return &ans, nil
}

// deployFolder deploys a folder or an HTML file. With a key the deploy
// names contents by hash and is sent first: the server refuses a taken
// slug or too many files before anything is uploaded, and an unchanged
// redeploy is one request. When contents are missing, they are uploaded
// and the deploy sent again; twice, in case the collector took content
// the server had when asked (nothing referenced it). Without a key the
// bytes go inline.
func deployFolder(api *apiClient, method, path, target string, o deployOptions, spaSet bool, errOut io.Writer) (*deployAnswer, error) {
	files, err := collectFiles(target, errOut)
	if err != nil {
		return nil, err
	}
	body := map[string]any{}
	if o.slug != "" && o.id == "" {
		body["slug"] = o.slug
	}
	if o.title != "" {
		body["title"] = o.title
	}
	if spaSet {
		body["is_spa"] = o.spa // --spa=false turns it off on an update
	}
	entries := make([]map[string]string, 0, len(files))
	for _, f := range files {
		if api.key != "" {
			entries = append(entries, map[string]string{"path": f.path, "sha256": f.hash})
			continue
		}
		// inline: the whole site goes in one request body anyway
		data, err := os.ReadFile(f.src)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", f.src, err)
		}
		if store.HashBytes(data) != f.hash {
			return nil, fmt.Errorf("%s changed during the deploy: run it again", f.src)
		}
		entries = append(entries, map[string]string{"path": f.path, "content": base64.StdEncoding.EncodeToString(data), "encoding": "base64"})
	}
	body["files"] = entries
	var ans deployAnswer
	err = api.call(method, path, body, "", &ans)
	uploaded := false
	for try := 0; try < 2 && api.key != "" && isMissingContent(err); try++ {
		if err := uploadMissing(api, files, errOut); err != nil {
			return nil, err
		}
		uploaded = true
		err = api.call(method, path, body, "", &ans)
	}
	if err != nil {
		return nil, err
	}
	if api.key != "" && !uploaded {
		fmt.Fprintf(errOut, "%d files, 0 to upload\n", len(files))
	}
	return &ans, nil
}

// isMissingContent tells a deploy refused because contents it names by
// hash are not on the server.
func isMissingContent(err error) bool {
	ae, ok := err.(*apiCallError)
	return ok && ae.Status == http.StatusBadRequest && strings.Contains(ae.Msg, sites.ContentMissingPhrase)
}

// ownDeploymentID returns the id of the caller's deployment with slug, or
// "" when the caller has none by that name.
func ownDeploymentID(api *apiClient, slug string) (string, error) {
	var ans struct {
		Deployments []struct{ ID, Slug string } `json:"deployments"`
	}
	if err := api.call("GET", "/deploys", nil, "", &ans); err != nil {
		return "", err
	}
	for _, d := range ans.Deployments {
		if d.Slug == slug {
			return d.ID, nil
		}
	}
	return "", nil
}

// archiveOfPath tells an archive to upload as is by its name.
func archiveOfPath(p string) string {
	l := strings.ToLower(p)
	switch {
	case strings.HasSuffix(l, ".zip"):
		return sites.ArchiveZip
	case strings.HasSuffix(l, ".tar.gz"), strings.HasSuffix(l, ".tgz"):
		return sites.ArchiveTarGz
	}
	return ""
}

// collectFiles reads a folder's files (or one HTML file, as index.html),
// hashed, in path order. A link to a file inside the folder is deployed
// as that file; other links (to folders, or out of the folder, which
// could publish what was never meant to be) are skipped with a warning
// on warn.
func collectFiles(target string, warn io.Writer) ([]localFile, error) {
	st, err := os.Stat(target)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		ext := strings.ToLower(filepath.Ext(target))
		if !st.Mode().IsRegular() || (ext != ".html" && ext != ".htm") {
			return nil, fmt.Errorf("%s: deploy a folder, an .html file, or a .zip or .tar.gz archive", target)
		}
		f, err := hashLocalFile("index.html", target)
		if err != nil {
			return nil, err
		}
		return []localFile{f}, nil
	}
	// the folder itself may be a link: walk what it points to
	root, err := filepath.EvalSymlinks(target)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", target, err)
	}
	var files []localFile
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if rel != "." && strings.HasPrefix(d.Name(), ".") && d.Name() != ".well-known" {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		src := p
		switch {
		case d.Type().IsRegular():
		case d.Type()&fs.ModeSymlink != 0:
			dest, why := resolveLink(root, p)
			if why != "" {
				fmt.Fprintf(warn, "skipped %s: a link %s\n", filepath.ToSlash(rel), why)
				return nil
			}
			src = dest // read from where it was checked, not through the link
		default:
			return nil // folders, devices, sockets
		}
		f, err := hashLocalFile(filepath.ToSlash(rel), src)
		if err != nil {
			return err
		}
		files = append(files, f)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", target, err)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%s has no files to deploy", target)
	}
	sort.Slice(files, func(i, j int) bool { return files[i].path < files[j].path })
	return files, nil
}

// resolveLink returns where the link at p (inside root, itself resolved)
// leads, or why it is not deployed: it must lead to a regular file inside
// root that is not hidden.
func resolveLink(root, p string) (dest, refused string) {
	dest, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", "that leads nowhere"
	}
	rel, err := filepath.Rel(root, dest)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", "out of the folder"
	}
	for _, seg := range strings.Split(filepath.ToSlash(rel), "/") {
		if strings.HasPrefix(seg, ".") && seg != ".well-known" {
			return "", "into a hidden file or folder"
		}
	}
	if st, err := os.Lstat(dest); err != nil || !st.Mode().IsRegular() {
		return "", "to a folder or a special file"
	}
	return dest, ""
}

// uploadMissing asks the server which contents it lacks and uploads
// them, with a progress bar on a terminal and plain lines otherwise.
func uploadMissing(api *apiClient, files []localFile, errOut io.Writer) error {
	byHash := map[string]localFile{}
	hashes := make([]string, 0, len(files))
	for _, f := range files {
		if _, ok := byHash[f.hash]; !ok {
			byHash[f.hash] = f
			hashes = append(hashes, f.hash)
		}
	}
	var ans struct {
		Missing []string `json:"missing"`
	}
	if err := api.call("POST", "/blobs/missing", map[string]any{"hashes": hashes}, "", &ans); err != nil {
		return err
	}
	var total int64
	for _, h := range ans.Missing {
		total += byHash[h].size
	}
	fmt.Fprintf(errOut, "%d files, %d to upload (%s)\n", len(files), len(ans.Missing), sites.FormatBytes(total))
	if len(ans.Missing) == 0 {
		return nil
	}
	var bar *progressbar.ProgressBar
	if f, ok := errOut.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		bar = progressbar.DefaultBytes(total, "uploading")
	}
	for i, h := range ans.Missing {
		f, ok := byHash[h]
		if !ok {
			return fmt.Errorf("the server asked for content %s that was not offered", termSafe(h))
		}
		if err := uploadBlob(api, f); err != nil {
			return err
		}
		if bar != nil {
			_ = bar.Add64(f.size)
		} else {
			fmt.Fprintf(errOut, "uploaded %d/%d %s\n", i+1, len(ans.Missing), f.path)
		}
	}
	if bar != nil {
		_ = bar.Finish()
	}
	return nil
}

// hashLocalFile hashes the file at src, read as a stream.
func hashLocalFile(sitePath, src string) (localFile, error) {
	fh, err := os.Open(src)
	if err != nil {
		return localFile{}, err
	}
	defer fh.Close()
	h := sha256.New()
	n, err := io.Copy(h, fh)
	if err != nil {
		return localFile{}, fmt.Errorf("read %s: %w", src, err)
	}
	return localFile{path: sitePath, src: src, size: n, hash: hex.EncodeToString(h.Sum(nil))}, nil
}

// uploadBlob sends f's bytes, streamed from disk, as the content of its
// hash. The server checks the hash: a file changed since it was hashed
// is refused.
func uploadBlob(api *apiClient, f localFile) error {
	body, err := openSized(f.src)
	if err != nil {
		return err
	}
	defer body.Close()
	if body.size != f.size {
		return fmt.Errorf("%s changed during the deploy: run it again", f.src)
	}
	if err := api.call("PUT", "/blobs/"+f.hash, body, "application/octet-stream", nil); err != nil {
		if ae, ok := err.(*apiCallError); ok && ae.Status == 400 {
			return fmt.Errorf("upload %s (did it change during the deploy?): %w", f.path, err)
		}
		return fmt.Errorf("upload %s: %w", f.path, err)
	}
	return nil
}

// sizedFile is an open file that a request sends with its
// Content-Length (net/http sends other readers chunked).
type sizedFile struct {
	*os.File
	size int64
}

// prepare makes req send the file with its Content-Length, and lets the
// client send it again (a redirect, a retry on a closed connection). An
// empty file is sent as no body: net/http would send it chunked.
func (f *sizedFile) prepare(req *http.Request) {
	if f.size == 0 {
		req.Body, req.GetBody, req.ContentLength = http.NoBody, nil, 0
		return
	}
	// sections of the file, which the client may close: the file stays
	// open for the next send, and its opener closes it
	req.ContentLength = f.size
	// the server may refuse before reading (a taken slug, a full upload
	// budget): then nothing is sent
	req.Header.Set("Expect", "100-continue")
	req.GetBody = func() (io.ReadCloser, error) {
		return io.NopCloser(io.NewSectionReader(f.File, 0, f.size)), nil
	}
	req.Body, _ = req.GetBody()
}

// openSized opens the file at p for upload.
func openSized(p string) (*sizedFile, error) {
	fh, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	st, err := fh.Stat()
	if err != nil {
		fh.Close()
		return nil, fmt.Errorf("read %s: %w", p, err)
	}
	return &sizedFile{File: fh, size: st.Size()}, nil
}
