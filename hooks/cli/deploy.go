package cli

import (
	"cmp"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"sitedrop/sites"
	"sitedrop/sites/client"
	"sitedrop/sites/safetext"
	"sitedrop/sites/store"
	"sitedrop/sites/wire"
)

// deployOptions are the flags of `sitedrop deploy`.
type deployOptions struct {
	server, key, slug, title, id string
	spa, protect                 bool
	password                     string
	protectSet                   bool // --protect was given
	draft                        bool
	alias, message               string
	messageSet                   bool // --message was given ("" then sends none)
	parallel                     int  // uploads at once
}

// newDeployCommand is `sitedrop deploy PATH`: a folder, an HTML file or a
// zip/tar.gz archive. With a key it uploads only the contents the server
// lacks (the digest protocol); without one it makes an anonymous
// deployment with the bytes inline.
func newDeployCommand() *cobra.Command {
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
links are skipped, with a warning.

--draft saves the new version without making it live: it prints the
version's preview URL (v<N>--<slug>), and "sitedrop promote" makes it live.
--alias NAME points NAME--<slug> at the new version too. --message
describes the version; without it a folder in a git work tree sends the
subject of its checked-out commit (git on PATH).`,
		Args:         cobra.ExactArgs(1),
		SilenceUsage: true,
		Annotations:  map[string]string{NoBootstrapAnnotation: "true"},
		RunE: func(c *cobra.Command, args []string) error {
			if o.parallel < 1 || o.parallel > maxUploadParallel {
				return fmt.Errorf("--parallel must be between 1 and %d", maxUploadParallel)
			}
			api, err := newAPIClient(o.server, o.key)
			if err != nil {
				return err
			}
			return shown(runDeploy(c, api, o, args[0]))
		},
	}
	clientFlags(c, &o.server, &o.key)
	c.Flags().StringVar(&o.slug, "slug", "", "the site's slug (new deployments; default: generated)")
	c.Flags().StringVar(&o.title, "title", "", "the site's title")
	c.Flags().BoolVar(&o.spa, "spa", false, "serve index.html for unknown paths (single-page app)")
	c.Flags().StringVar(&o.password, "password", "", "protect the site with this password (8 to 128 characters)")
	c.Flags().BoolVar(&o.protect, "protect", false, "make the site private, open with its share link (printed); --protect=false removes the link")
	c.Flags().StringVar(&o.id, "id", "", "update this deployment instead of creating one")
	c.Flags().BoolVar(&o.draft, "draft", false, "save the version without making it live; print its preview URL")
	c.Flags().StringVar(&o.alias, "alias", "", "point the alias NAME--<slug> at the new version (e.g. staging)")
	c.Flags().StringVar(&o.message, "message", "", "describe the version (default: the git commit subject of a folder in a git work tree)")
	c.Flags().IntVar(&o.parallel, "parallel", defaultUploadParallel, "contents uploaded at once")
	return c
}

// clientFlags adds --server and --key.
func clientFlags(c *cobra.Command, server, key *string) {
	c.Flags().StringVar(server, "server", "", "server URL (default: $SITEDROP_SERVER, the saved login's, or "+defaultServer+")")
	c.Flags().StringVar(key, "key", "", "API key (default: $SITEDROP_KEY or the saved login's)")
}

// runDeploy deploys target: it picks the deployment to update (--id, or
// the caller's own --slug) and prints the URL on stdout, the rest on
// stderr.
func runDeploy(c *cobra.Command, api *client.Client, o deployOptions, target string) error {
	out, errOut := c.OutOrStdout(), c.ErrOrStderr()
	if o.id != "" && api.Key == "" {
		return fmt.Errorf("--id: %w", errNoKey)
	}
	if o.draft && api.Key == "" {
		return fmt.Errorf("--draft: %w", errNoKey)
	}
	if o.alias != "" && api.Key == "" {
		return fmt.Errorf("--alias: %w", errNoKey)
	}
	o.messageSet = c.Flags().Changed("message")
	if !o.messageSet {
		if st, err := os.Stat(target); err == nil && st.IsDir() {
			if o.message = gitSubject(target); o.message != "" {
				fmt.Fprintf(errOut, "Message (the git commit's subject): %s\n", safetext.Escape(o.message))
			}
		}
	}
	if o.id == "" && o.slug != "" && api.Key != "" {
		// deploying to one's own slug again updates that site, as
		// surge.sh does: scripts need not keep its id
		id, err := ownDeploymentID(api, o.slug)
		if err != nil {
			return err
		}
		if id != "" {
			o.id = id
			fmt.Fprintf(errOut, "Updating %s (deployment %s)\n", o.slug, safetext.Escape(id))
		}
	}
	var ans *wire.DeployAnswer
	var err error
	o.protectSet = c.Flags().Changed("protect")
	if format := archiveOfPath(target); format != "" {
		ans, err = deployArchive(api, format, target, o, c.Flags().Changed("spa"))
	} else {
		ans, err = deployFolder(api, target, o, c.Flags().Changed("spa"), errOut)
	}
	if err != nil {
		return err
	}
	printURLs(out, errOut, ans)
	if ans.ShareURL != "" {
		fmt.Fprintf(errOut, "Share link (lets its holder in): %s\n", safetext.Escape(ans.ShareURL))
	}
	for _, w := range ans.Warnings {
		where := safetext.Escape(w.File)
		if w.Line > 0 {
			where += fmt.Sprintf(" line %d", w.Line)
		}
		if w.Text != "" {
			where += ": " + safetext.Escape(w.Text)
		}
		fmt.Fprintf(errOut, "warning: %s: %s\n", where, safetext.Escape(w.Reason))
	}
	printReport(errOut, ans.Report)
	if ans.Claim != nil && ans.ClaimURL != "" {
		fmt.Fprintf(errOut, "Anonymous deployment %s: it expires at %s unless claimed at\n%s\n", safetext.Escape(ans.ID), safetext.Escape(ans.ExpiresAt), safetext.Escape(ans.ClaimURL))
		if ans.AwaitingClaim {
			fmt.Fprintln(errOut, "Not shown yet: this server shows anonymous sites once claimed; until then visitors see an \"awaiting claim\" page.")
		}
	} else {
		fmt.Fprintf(errOut, "Deployment %s (%s)\n", safetext.Escape(ans.ID), safetext.Escape(ans.Slug))
	}
	if ans.Draft {
		fmt.Fprintf(errOut, "Version %d is a draft: the site still serves what it served. Make it live with\nsitedrop promote %s %d\n", ans.Version, safetext.Escape(ans.ID), ans.Version)
	}
	return nil
}

// printURLs prints a deploy's addresses: on stdout the one that serves
// the new version (the site's; a draft's preview URL, or its alias's when
// it has no preview host), on stderr the others.
func printURLs(out, errOut io.Writer, ans *wire.DeployAnswer) {
	main := ans.URL
	if ans.Draft {
		main = cmp.Or(ans.PreviewURL, ans.AliasURL)
	}
	if main != "" {
		fmt.Fprintln(out, safetext.Escape(main))
	}
	if ans.Draft {
		fmt.Fprintf(errOut, "Site (not changed): %s\n", safetext.Escape(ans.URL))
	}
	if ans.PreviewURL != "" && ans.PreviewURL != main {
		fmt.Fprintf(errOut, "Preview of version %d: %s\n", ans.Version, safetext.Escape(ans.PreviewURL))
	}
	if ans.AliasURL != "" && ans.AliasURL != main {
		fmt.Fprintf(errOut, "Alias: %s\n", safetext.Escape(ans.AliasURL))
	}
}

// release sets the deploy's draft, alias and message in body.
func (o deployOptions) release(body *wire.DeployRequest) {
	if o.draft {
		body.Draft = &o.draft
	}
	if o.alias != "" {
		body.Alias = &o.alias
	}
	if o.message != "" {
		body.Message = &o.message
	}
}

// deployArchive sends a zip or tar.gz archive as it is, streamed from
// disk, with the metadata in the query. spaSet tells that --spa was given.
func deployArchive(api *client.Client, format, target string, o deployOptions, spaSet bool) (*wire.DeployAnswer, error) {
	archive, err := openSized(target)
	if err != nil {
		return nil, err
	}
	defer archive.Close()
	a := client.Archive{Body: archive.body(), ContentType: "application/zip", Title: o.title}
	if format == sites.ArchiveTarGz {
		a.ContentType = "application/gzip"
	}
	if o.id == "" {
		a.Slug = o.slug
	}
	if spaSet {
		a.IsSPA = &o.spa
	}
	a.Password = o.password
	a.Draft, a.Alias, a.Message = o.draft, o.alias, o.message
	if o.protectSet {
		a.Protect = &o.protect
	}
	return api.DeployArchive(o.id, a)
}

// deployFolder deploys a folder or an HTML file. With a key the deploy
// names contents by hash and is sent first: the server refuses a taken
// slug or too many files before anything is uploaded, and an unchanged
// redeploy is one request. When contents are missing, they are uploaded
// and the deploy sent again; twice, in case the collector took content
// the server had when asked (nothing referenced it). Without a key the
// bytes go inline.
func deployFolder(api *client.Client, target string, o deployOptions, spaSet bool, errOut io.Writer) (*wire.DeployAnswer, error) {
	files, err := collectFiles(target, errOut)
	if err != nil {
		return nil, err
	}
	body := &wire.DeployRequest{}
	if o.title != "" {
		body.Title = &o.title
	}
	if o.id == "" && o.slug != "" {
		body.Slug = &o.slug
	}
	if spaSet {
		body.IsSPA = &o.spa // --spa=false turns it off on an update
	}
	if o.password != "" {
		body.Password = wire.Password{Set: true, Value: o.password}
	}
	if o.protectSet {
		body.Protect = wire.Protect{Set: true, On: o.protect}
	}
	o.release(body)
	entries := make([]wire.FileEntry, 0, len(files))
	for _, f := range files {
		if api.Key != "" {
			entries = append(entries, wire.FileEntry{Path: f.path, SHA256: f.hash})
			continue
		}
		// inline: the whole site goes in one request body anyway
		e, err := inlineFile(f)
		if err != nil {
			return nil, err
		}
		entries = append(entries, e)
	}
	body.Files = &entries
	ans, err := api.Deploy(o.id, body)
	uploaded := false
	for try := 0; try < 2 && api.Key != "" && isMissingContent(err); try++ {
		inlined, upErr := uploadMissing(api, files, errOut, o.parallel, try == 0)
		if upErr != nil {
			return nil, upErr
		}
		uploaded = true
		if len(inlined) == 0 {
			ans, err = api.Deploy(o.id, body)
			continue
		}
		withInline := slices.Clone(entries)
		for i, f := range files {
			if inlined[f.hash] {
				if withInline[i], err = inlineFile(f); err != nil {
					return nil, err
				}
			}
		}
		inlineBody := *body
		inlineBody.Files = &withInline
		ans, err = api.Deploy(o.id, &inlineBody)
		if ce, ok := err.(*client.Error); ok && ce.Status == http.StatusRequestEntityTooLarge {
			// the server's --max-body is smaller than the inline budget
			if _, upErr := uploadMissing(api, files, errOut, o.parallel, false); upErr != nil {
				return nil, upErr
			}
			ans, err = api.Deploy(o.id, body)
		}
	}
	if err != nil {
		return nil, err
	}
	if api.Key != "" && !uploaded {
		fmt.Fprintf(errOut, "%d files, 0 to upload\n", len(files))
	}
	return ans, nil
}

// inlineFile is f's entry with its bytes inline (base64), checked
// against the hash it was listed with.
func inlineFile(f localFile) (wire.FileEntry, error) {
	data, err := os.ReadFile(f.src)
	if err != nil {
		return wire.FileEntry{}, fmt.Errorf("read %s: %w", f.src, err)
	}
	if store.HashBytes(data) != f.hash {
		return wire.FileEntry{}, fmt.Errorf("%s changed during the deploy: run it again", f.src)
	}
	content := base64.StdEncoding.EncodeToString(data)
	return wire.FileEntry{Path: f.path, Content: &content, Encoding: "base64"}, nil
}

// isMissingContent tells a deploy refused because contents it names by
// hash are not on the server: its message is built around
// sites.ContentMissingPhrase.
func isMissingContent(err error) bool {
	ce, ok := err.(*client.Error)
	return ok && ce.Status == http.StatusBadRequest && strings.Contains(ce.Msg, sites.ContentMissingPhrase)
}

// ownDeploymentID returns the id of the caller's deployment with slug, or
// "" when the caller has none by that name.
func ownDeploymentID(api *client.Client, slug string) (string, error) {
	deployments, err := api.List()
	if err != nil {
		return "", err
	}
	for _, d := range deployments {
		if d.Slug == slug {
			return d.ID, nil
		}
	}
	return "", nil
}
