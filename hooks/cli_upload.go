package hooks

import (
	"context"
	"fmt"
	"io"
	"sync"

	"sitedrop/sites"
	"sitedrop/sites/client"
)

// defaultUploadParallel is how many uploads `sitedrop deploy` runs at once
// (--parallel): enough to hide a request's round trip and the server's
// per-upload work, well under the server's connections per client.
const defaultUploadParallel = 8

// maxUploadParallel bounds --parallel.
const maxUploadParallel = 64

// uploadMissing asks the server which contents it lacks and uploads
// them, parallel at a time, with progress on errOut (see uploadProgress).
// The first failed upload stops the others and is returned, naming its
// file.
func uploadMissing(api *client.Client, files []localFile, errOut io.Writer, parallel int) error {
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
		return err
	}
	todo := make([]localFile, 0, len(missing))
	var total int64
	for _, h := range missing {
		f, ok := byHash[h]
		if !ok {
			return fmt.Errorf("the server asked for content %s that was not offered", termSafe(h))
		}
		todo = append(todo, f)
		total += f.size
	}
	fmt.Fprintf(errOut, "%d files, %d to upload (%s)\n", len(files), len(todo), sites.FormatBytes(total))
	if len(todo) == 0 {
		return nil
	}
	progress := newUploadProgress(errOut, isTerminal(errOut), len(todo), total)
	err = uploadAll(api, todo, parallel, progress.add)
	progress.finish()
	return err
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
