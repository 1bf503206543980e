package cli

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"sitedrop/sites"
	"sitedrop/sites/client"
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

// sizedFile is a file opened for upload, with its size when opened.
type sizedFile struct {
	*os.File
	size int64
}

// body is the file as a request body: sent with its Content-Length, and
// sent again, read from the start, when the client must.
func (f *sizedFile) body() client.Sized {
	return client.Sized{R: f.File, Size: f.size}
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
