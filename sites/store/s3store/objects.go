package s3store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// ObjectInfo is a listed object: its key relative to the store's prefix,
// its ETag (quoted, as the server gives it), size and last write.
type ObjectInfo struct {
	Key      string
	ETag     string
	Size     int64
	Modified time.Time
}

// Condition guards a PutObject: IfMatch replaces only the object with that
// ETag; IfNoneMatch creates the object only when it does not exist. The
// zero Condition writes unconditionally.
type Condition struct {
	IfMatch     string
	IfNoneMatch bool
}

// GetObject reads the object at key (relative to the prefix) and its ETag;
// ErrNotFound when there is none.
func (s *Store) GetObject(ctx context.Context, key string) ([]byte, string, error) {
	out, err := s.client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(s.loc.Bucket), Key: aws.String(s.key(key))})
	if err != nil {
		if statusOf(err) == http.StatusNotFound {
			return nil, "", ErrNotFound
		}
		return nil, "", fmt.Errorf("get %s: %w", key, err)
	}
	defer out.Body.Close()
	data, err := io.ReadAll(out.Body)
	if err != nil {
		return nil, "", fmt.Errorf("read %s: %w", key, err)
	}
	return data, aws.ToString(out.ETag), nil
}

// GetObjectIfNoneMatch is GetObject made conditional on the ETag a
// previous read gave: ErrNotModified (a 304, no body sent) when the object
// still has it. An empty etag reads unconditionally.
func (s *Store) GetObjectIfNoneMatch(ctx context.Context, key, etag string) ([]byte, string, error) {
	in := &s3.GetObjectInput{Bucket: aws.String(s.loc.Bucket), Key: aws.String(s.key(key))}
	if etag != "" {
		in.IfNoneMatch = aws.String(etag)
	}
	out, err := s.client.GetObject(ctx, in)
	if err != nil {
		switch statusOf(err) {
		case http.StatusNotModified:
			return nil, etag, ErrNotModified
		case http.StatusNotFound:
			return nil, "", ErrNotFound
		}
		return nil, "", fmt.Errorf("get %s: %w", key, err)
	}
	defer out.Body.Close()
	data, err := io.ReadAll(out.Body)
	if err != nil {
		return nil, "", fmt.Errorf("read %s: %w", key, err)
	}
	return data, aws.ToString(out.ETag), nil
}

// PutObject writes data at key under cond and returns the new ETag;
// ErrPrecondition when cond failed.
func (s *Store) PutObject(ctx context.Context, key string, data []byte, cond Condition) (string, error) {
	in := &s3.PutObjectInput{
		Bucket:        aws.String(s.loc.Bucket),
		Key:           aws.String(s.key(key)),
		Body:          bytes.NewReader(data),
		ContentLength: aws.Int64(int64(len(data))),
	}
	if cond.IfMatch != "" {
		in.IfMatch = aws.String(cond.IfMatch)
	}
	if cond.IfNoneMatch {
		in.IfNoneMatch = aws.String("*")
	}
	out, err := s.client.PutObject(ctx, in)
	if err != nil {
		if isConditionFailure(err) {
			return "", ErrPrecondition
		}
		return "", fmt.Errorf("put %s: %w", key, err)
	}
	return aws.ToString(out.ETag), nil
}

// DeleteObject removes the object at key; a missing one is not an error.
func (s *Store) DeleteObject(ctx context.Context, key string) error {
	_, err := s.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(s.loc.Bucket), Key: aws.String(s.key(key))})
	if err != nil && statusOf(err) != http.StatusNotFound {
		return fmt.Errorf("delete %s: %w", key, err)
	}
	return nil
}

// ListObjects calls fn for every object whose key starts with prefix
// (relative to the store's), 1,000 per request.
func (s *Store) ListObjects(ctx context.Context, prefix string, fn func(ObjectInfo) error) error {
	p := s3.NewListObjectsV2Paginator(s.client, &s3.ListObjectsV2Input{
		Bucket: aws.String(s.loc.Bucket),
		Prefix: aws.String(s.key(prefix)),
	})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return fmt.Errorf("list %s: %w", prefix, err)
		}
		for _, o := range page.Contents {
			k := aws.ToString(o.Key)
			if len(k) < len(s.loc.Prefix) {
				continue
			}
			err := fn(ObjectInfo{
				Key:      k[len(s.loc.Prefix):],
				ETag:     aws.ToString(o.ETag),
				Size:     aws.ToInt64(o.Size),
				Modified: aws.ToTime(o.LastModified),
			})
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// statusOf is the HTTP status of a failed request, 0 when it got none.
func statusOf(err error) int {
	var re *awshttp.ResponseError
	if errors.As(err, &re) {
		return re.HTTPStatusCode()
	}
	return 0
}

// isConditionFailure reports a failed If-Match/If-None-Match: 412, or
// 409 ConditionalRequestConflict (a concurrent conditional write).
func isConditionFailure(err error) bool {
	st := statusOf(err)
	return st == http.StatusPreconditionFailed || st == http.StatusConflict
}
