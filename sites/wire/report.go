package wire

// Warning is a line of a site's _redirects or _headers that is not
// applied, and why (sites/rules finds them).
type Warning struct {
	File   string `json:"file"`   // "_redirects" or "_headers"
	Line   int    `json:"line"`   // 1-based
	Text   string `json:"text"`   // the line (trimmed, cut to ~200 bytes)
	Reason string `json:"reason"` // why, in plain words
}

// Report is a deploy's quality report, as the deploy's answer carries it
// in "report": what a visitor of the site would meet (sites/report builds
// it). Every list is present (empty when nothing was found), in a stable
// order: pages by path, then in document order; each holds at most 100
// entries.
type Report struct {
	BrokenLinks   []BrokenLink  `json:"broken_links"`
	Forms         []FormProblem `json:"forms"`
	Rules         []RuleProblem `json:"rules"`
	UntitledPages []string      `json:"untitled_pages"`
	LargeImages   []LargeImage  `json:"large_images"`
	// Truncated is true when findings were left out: a list had more
	// than its entries to hold, or a scan limit (or the deploy's end)
	// stopped the examination before the last file. A rule file's
	// line-0 summary of the lines it did not list counts them, so it
	// leaves nothing out and does not set it.
	Truncated bool `json:"truncated"`
}

// BrokenLink is a link to a path of the site that the site does not
// serve: Page is the file that holds it (a page or a style sheet), Target
// the path it resolves to, starting with "/".
type BrokenLink struct {
	Page   string `json:"page"`
	Target string `json:"target"`
}

// FormProblem is a form of Page whose submissions go nowhere.
type FormProblem struct {
	Page    string `json:"page"`
	Problem string `json:"problem"`
}

// RuleProblem is a line of _redirects or _headers that is not applied
// (Line 0: a summary of the lines left out).
type RuleProblem struct {
	File    string `json:"file"`
	Line    int    `json:"line"`
	Message string `json:"message"`
}

// LargeImage is an image over 1 MiB: its path in the site and its size
// in bytes.
type LargeImage struct {
	Path string `json:"path"`
	Size int64  `json:"size"`
}
