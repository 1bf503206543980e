package report

import (
	"fmt"
	"net/url"
	"path"
	"strings"

	"sitedrop/sites"
	"sitedrop/sites/serve"
)

// submitPlaceholder in a form's action is the deployment's form endpoint.
const submitPlaceholder = sites.SubmitURLPlaceholder

// Form problems, as a FormProblem says them.
const (
	problemNoAction = `no action: its submissions go nowhere (use action="` + submitPlaceholder + `")`
	problemMissing  = "action %s is not served by the site"
	problemPost     = `method POST to %s: the site serves files and refuses POST (use action="` + submitPlaceholder + `")`
)

// page examines one HTML page: its title, links and forms.
func (b *builder) page(f sites.File, untitled bool) {
	ps := scanHTML(b.ctx, f.Data, min(MaxLinksPerPage, b.linksLeft))
	if ps.capped || ps.stopped {
		b.r.Truncated = true
	}
	if untitled && !ps.hasTitle && !ps.stopped {
		b.r.UntitledPages = appendCapped(b, b.r.UntitledPages, f.Path)
	}
	base, external := b.baseURL(f.Path, ps.base)
	seen := map[string]bool{}
	for _, r := range ps.refs {
		b.link(f.Path, seen, base, external, r.url, r.kind)
	}
	for _, fm := range ps.forms {
		if problem := b.formProblem(base, external, fm); problem != "" {
			b.r.Forms = appendCapped(b, b.r.Forms, FormProblem{Page: f.Path, Problem: problem})
		}
	}
}

// styleSheet examines the url()s and @imports of one .css file, which
// resolve against the style sheet's own URL.
func (b *builder) styleSheet(f sites.File) {
	base := &url.URL{Path: "/" + f.Path}
	seen := map[string]bool{}
	n := 0
	cssURLs(f.Data, func(raw string) bool {
		if n >= min(MaxLinksPerPage, b.linksLeft) || b.ctx.Err() != nil {
			b.r.Truncated = true
			return false
		}
		if b.link(f.Path, seen, base, false, raw, refAsset) {
			n++
		}
		return true
	})
}

// link checks the link raw of file, resolved against base (see internal),
// unless seen holds its target and query already: a link is examined once
// per file. It reports whether it was examined (and counted in linksLeft).
func (b *builder) link(file string, seen map[string]bool, base *url.URL, external bool, raw string, kind refKind) bool {
	target, query, ok := internal(base, external, raw)
	if !ok {
		return false
	}
	key := target + "?" + query
	if seen[key] {
		return false
	}
	seen[key] = true
	b.linksLeft--
	if b.broken(target, query, kind) {
		b.r.BrokenLinks = appendCapped(b, b.r.BrokenLinks, BrokenLink{Page: file, Target: target})
	}
	return true
}

// baseURL is the URL a page's relative links resolve against: the URL
// the site serves the page at, or its <base href> resolved against it.
// external is true when <base> points to another site: then relative
// links are not the site's.
func (b *builder) baseURL(file, baseHref string) (base *url.URL, external bool) {
	base = &url.URL{Path: b.check.PageURL(file)}
	if baseHref == "" {
		return base, false
	}
	u, err := url.Parse(baseHref)
	if err != nil {
		return base, false // a browser ignores a base it cannot parse
	}
	if u.Scheme != "" || u.Host != "" {
		return base, true
	}
	return base.ResolveReference(u), false
}

// internal resolves the link raw against base and returns the site path
// (unescaped) and raw query it asks for; ok is false for a link that is
// not a path of this site: another site's URL, a scheme such as mailto:,
// a fragment of the page itself, a template placeholder, a URL that
// does not parse.
func internal(base *url.URL, external bool, raw string) (target, query string, ok bool) {
	raw = strings.TrimSpace(raw)
	if raw == "" || raw[0] == '#' || strings.Contains(raw, "{{") {
		return "", "", false
	}
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "" || u.Host != "" || u.Opaque != "" {
		return "", "", false
	}
	if external && !strings.HasPrefix(u.Path, "/") {
		return "", "", false
	}
	abs := base.ResolveReference(u)
	target = abs.Path
	if target == "" {
		target = "/"
	}
	return target, abs.RawQuery, true
}

// broken reports whether the site does not serve target: nothing answers
// it, or only a single-page app's fallback does for what is no page.
func (b *builder) broken(target, query string, kind refKind) bool {
	switch b.check.Resolve(target, query) {
	case serve.Missing:
		return true
	case serve.Fallback:
		return kind != refPage || !pageLike(target)
	}
	return false
}

// pageLike reports whether a path looks like a page's URL, which a
// single-page app's router may answer: no file extension, or .html.
func pageLike(p string) bool {
	ext := path.Ext(p)
	return ext == "" || strings.EqualFold(ext, ".html") || strings.EqualFold(ext, ".htm")
}

// formProblem says what is wrong with a form, "" when nothing is: a form
// must name where it posts (the site's {{SUBMIT_URL}} or another site),
// and a static path can only be fetched, never posted to.
func (b *builder) formProblem(base *url.URL, external bool, fm form) string {
	if !fm.hasAction {
		if fm.post || fm.inputs {
			return problemNoAction
		}
		return ""
	}
	if strings.Contains(fm.action, submitPlaceholder) {
		return ""
	}
	target, query, ok := internal(base, external, fm.action)
	if !ok {
		return ""
	}
	if b.broken(target, query, refPage) {
		return fmt.Sprintf(problemMissing, target)
	}
	if fm.post {
		return fmt.Sprintf(problemPost, target)
	}
	return ""
}
