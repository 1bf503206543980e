package cli

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"time"
	"unicode"

	"sitedrop/sites"
)

// gitTimeout bounds the git run that reads a folder's commit subject: a
// deploy does not wait on a slow or hung git.
const gitTimeout = 3 * time.Second

// gitSubject is the subject of the commit checked out in the git work
// tree that holds dir, made a valid deploy message (see deployMessage);
// "" when git is not on PATH, dir is in no work tree, the work tree has
// no commit yet, or git fails or is slow. It runs `git -C dir log -1
// --format=%s` rather than reading .git itself: packed refs, worktrees,
// submodules and detached heads are git's to resolve.
func gitSubject(dir string) string {
	gitPath, err := exec.LookPath("git")
	if err != nil {
		return ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), gitTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, gitPath, "-C", dir, "log", "-1", "--format=%s")
	// no pager, no prompt, no locale: the subject only
	cmd.Env = append(os.Environ(), "GIT_PAGER=cat", "GIT_TERMINAL_PROMPT=0", "GIT_OPTIONAL_LOCKS=0")
	out, err := cmd.Output()
	if err != nil {
		return ""
	}
	return deployMessage(string(out))
}

// deployMessage is s as a deploy message the server takes: control
// characters become spaces, bidirectional overrides are dropped, spaces
// are trimmed and it is cut to sites.MaxMessageLen characters (the
// last one an ellipsis when cut).
func deployMessage(s string) string {
	s = strings.TrimSpace(strings.Map(func(r rune) rune {
		switch {
		case r == unicode.ReplacementChar:
			return -1 // invalid UTF-8 as strings.Map reads it
		case unicode.IsControl(r):
			return ' '
		case isBidiOverride(r):
			return -1
		}
		return r
	}, s))
	if rs := []rune(s); len(rs) > sites.MaxMessageLen {
		s = strings.TrimSpace(string(rs[:sites.MaxMessageLen-1])) + "…"
	}
	return s
}

// isBidiOverride tells the bidirectional embedding, override and isolate
// controls (LRE, RLE, PDF, LRO, RLO, LRI, RLI, FSI, PDI).
func isBidiOverride(r rune) bool {
	return (r >= 0x202A && r <= 0x202E) || (r >= 0x2066 && r <= 0x2069)
}
