package cli

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"sync"

	"sitedrop/sites"
	"sitedrop/sites/client"
	"sitedrop/sites/safetext"
)

// defaultUploadParallel is how many uploads `sitedrop deploy` runs at once
// (--parallel): enough to hide a request's round trip and the server's
// per-upload work, well under the server's connections per client.
const defaultUploadParallel = 8

// maxUploadParallel bounds --parallel.
const maxUploadParallel = 64

// Inlining: a first deploy of a big site lacks thousands of contents, and
// each upload costs the server a request, a key lookup and two fsyncs.
// When at least inlineMinFiles contents are missing, the smallest of them,
// up to inlineBudget bytes, go in the deploy request itself instead (one
// request, written in one batch); the others are uploaded. The budget keeps
// the request (base64: 4/3 of it) well under the default --max-body; a
// server with a smaller limit answers 413 and they are uploaded after all.
const (
	inlineMinFiles = 100
	inlineBudget   = 16 << 20
)

// uploadMissing asks the server which contents it lacks and uploads
// them, parallel at a time, with progress on errOut (see uploadProgress),
// except those it returns, by hash, to go inline in the deploy (see
// inlineBudget; none when inline is false). The first failed upload stops
// the others and is returned, naming its file.
func uploadMissing(api *client.Client, files []localFile, errOut io.Writer, parallel int, inline bool) (map[string]bool, error) {
	byHash := map[string]localFile{}
	hashes := make([]string, 0, len(files))
	for _, f := range files {
		if _, ok := byHash[f.hash]; !ok {
			byHash[f.hash] = f
			hashes = append(hashes, f.hash)
		}
	}
	missing, err := api.Missing(hashes)
	if err != nil {
		return nil, err
	}
	todo := make([]localFile, 0, len(missing))
	var total int64
	for _, h := range missing {
		f, ok := byHash[h]
		if !ok {
			return nil, fmt.Errorf("the server asked for content %s that was not offered", safetext.Escape(h))
		}
		todo = append(todo, f)
		total += f.size
	}
	fmt.Fprintf(errOut, "%d files, %d to upload (%s)\n", len(files), len(todo), sites.FormatBytes(total))
	var inlined map[string]bool
	if inline && len(todo) >= inlineMinFiles {
		inlined, todo = planInline(todo, inlineBudget)
		var rest int64
		for _, f := range todo {
			rest += f.size
		}
		fmt.Fprintf(errOut, "%d of them in the deploy request, %d uploaded first\n", len(inlined), len(todo))
		total = rest
	}
	if len(todo) == 0 {
		return inlined, nil
	}
	progress := newUploadProgress(errOut, isTerminal(errOut), len(todo), total)
	err = uploadAll(api, todo, parallel, progress.add)
	progress.finish()
	return inlined, err
}

// planInline picks, smallest first, the contents to carry inline within
// budget bytes (their requests cost the most for their size) and returns
// them by hash, with the others to upload, in their order.
func planInline(todo []localFile, budget int64) (map[string]bool, []localFile) {
	bySize := slices.Clone(todo)
	slices.SortStableFunc(bySize, func(a, b localFile) int { return cmp.Compare(a.size, b.size) })
	inlined := map[string]bool{}
	for _, f := range bySize {
		if f.size > budget {
			break
		}
		budget -= f.size
		inlined[f.hash] = true
	}
	rest := make([]localFile, 0, len(todo)-len(inlined))
	for _, f := range todo {
		if !inlined[f.hash] {
			rest = append(rest, f)
		}
	}
	return inlined, rest
}

// uploadAll uploads files with up to parallel requests at once, calling
// done with the size of each file uploaded. The first error cancels the
// uploads under way, starts no other, and is returned.
func uploadAll(api *client.Client, files []localFile, parallel int, done func(size int64)) error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var (
		once  sync.Once
		first error
		wg    sync.WaitGroup
	)
	jobs := make(chan localFile)
	for range max(1, min(parallel, len(files))) {
		wg.Go(func() {
			for f := range jobs {
				if ctx.Err() != nil {
					continue // stopped: drain what was handed out
				}
				if err := uploadBlob(ctx, api, f); err != nil {
					once.Do(func() { first = err; cancel() })
					continue
				}
				done(f.size)
			}
		})
	}
feed:
	for _, f := range files {
		select {
		case jobs <- f:
		case <-ctx.Done():
			break feed
		}
	}
	close(jobs)
	wg.Wait()
	return first
}

// uploadBlob sends f's bytes, streamed from disk, as the content of its
// hash. The server checks the hash: a file changed since it was hashed
// is refused.
func uploadBlob(ctx context.Context, api *client.Client, f localFile) error {
	body, err := openSized(f.src)
	if err != nil {
		return err
	}
	defer body.Close()
	if body.size != f.size {
		return fmt.Errorf("%s changed during the deploy: run it again", f.src)
	}
	if err := api.UploadBlob(ctx, f.hash, body.body()); err != nil {
		if ce, ok := err.(*client.Error); ok && ce.Status == 400 {
			return fmt.Errorf("upload %s (did it change during the deploy?): %w", f.path, err)
		}
		return fmt.Errorf("upload %s: %w", f.path, err)
	}
	return nil
}
