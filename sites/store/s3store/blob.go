package s3store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// blob is an open S3 blob: the body of a GET from pos on. Seeking
// elsewhere closes the body, and the next Read sends a ranged GET
// (Range: bytes=<pos>-), so a Range request reads only what it sends
// from where it starts. Size and ModTime come from the first GET.
type blob struct {
	ctx  context.Context
	s    *Store
	key  string
	size int64
	mod  time.Time
	// body reads the object from bodyPos on; nil after a seek.
	body    io.ReadCloser
	bodyPos int64
	pos     int64
}

// get opens the body at off.
func (b *blob) get(off int64) error {
	in := &s3.GetObjectInput{Bucket: aws.String(b.s.loc.Bucket), Key: aws.String(b.key)}
	if off > 0 {
		in.Range = aws.String("bytes=" + strconv.FormatInt(off, 10) + "-")
	}
	out, err := b.s.client.GetObject(b.ctx, in)
	if err != nil {
		return err
	}
	if off == 0 {
		b.size = aws.ToInt64(out.ContentLength)
		b.mod = aws.ToTime(out.LastModified)
	}
	b.body, b.bodyPos = out.Body, off
	return nil
}

// Read implements io.Reader.
func (b *blob) Read(p []byte) (int, error) {
	if b.pos >= b.size {
		return 0, io.EOF
	}
	if b.body != nil && b.bodyPos != b.pos {
		b.body.Close()
		b.body = nil
	}
	if b.body == nil {
		if err := b.get(b.pos); err != nil {
			return 0, fmt.Errorf("read %s at %d: %w", b.key, b.pos, err)
		}
	}
	n, err := b.body.Read(p)
	b.pos += int64(n)
	b.bodyPos += int64(n)
	if errors.Is(err, io.EOF) && b.pos < b.size {
		err = io.ErrUnexpectedEOF
	}
	return n, err
}

// Seek implements io.Seeker; it sends nothing (see Read).
func (b *blob) Seek(offset int64, whence int) (int64, error) {
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		offset += b.pos
	case io.SeekEnd:
		offset += b.size
	default:
		return 0, errors.New("seek: invalid whence")
	}
	if offset < 0 {
		return 0, errors.New("seek: negative position")
	}
	b.pos = offset
	return offset, nil
}

// Close implements io.Closer.
func (b *blob) Close() error {
	if b.body == nil {
		return nil
	}
	err := b.body.Close()
	b.body = nil
	return err
}

// Size implements store.Blob.
func (b *blob) Size() int64 { return b.size }

// ModTime implements store.Blob.
func (b *blob) ModTime() time.Time { return b.mod }
