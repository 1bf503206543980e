// Package s3store keeps site content on an S3-compatible object store
// (AWS S3, Cloudflare R2, MinIO, Garage, SeaweedFS, versitygw): Store is a
// store.BlobStore whose blobs are content-addressed objects written once,
// read with ranged GETs, and it also gives the published manifests
// (sites/publish, sites/replica) plain conditional object access. The
// layout under the URL's prefix:
//
//	blobs/<sha256>           a blob (written once, never changed)
//	keep/<sha256>/<unix>     a KeepUntil marker: spare the blob until then
//	sites/<host>.json        a published manifest (see sites/publish)
//	sites/_feed.json         the recent changes of the manifests (ditto)
package s3store

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync/atomic"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"sitedrop/sites/store"
)

// Location is where a store lives, as an s3:// URL says:
//
//	s3://BUCKET/PREFIX?endpoint=URL&region=REGION
//
// endpoint is the server's base URL (http://127.0.0.1:7070,
// https://<account>.r2.cloudflarestorage.com); when given, requests use
// path-style addressing (http://host/bucket/key), which every
// S3-compatible server supports. Without it the client talks to AWS S3
// with virtual-hosted addressing. region defaults to the environment's
// (AWS_REGION, the shared config), else us-east-1. PREFIX is optional: all
// keys go under it. Credentials come from the environment as the AWS
// tools read them (AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, AWS_PROFILE
// and the shared files, an instance role).
type Location struct {
	Bucket   string
	Prefix   string // "" or ending in "/"
	Endpoint string
	Region   string
}

// ParseURL reads an s3:// URL (see Location).
func ParseURL(raw string) (Location, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return Location{}, fmt.Errorf("store URL: %w", err)
	}
	if u.Scheme != "s3" || u.Host == "" {
		return Location{}, fmt.Errorf("store URL %q: want s3://bucket/prefix?endpoint=...&region=...", raw)
	}
	loc := Location{Bucket: u.Host, Prefix: strings.Trim(u.Path, "/")}
	if loc.Prefix != "" {
		loc.Prefix += "/"
	}
	q := u.Query()
	for k := range q {
		if k != "endpoint" && k != "region" {
			return Location{}, fmt.Errorf("store URL %q: unknown parameter %q (endpoint, region)", raw, k)
		}
	}
	loc.Endpoint = q.Get("endpoint")
	loc.Region = q.Get("region")
	if loc.Endpoint != "" {
		e, err := url.Parse(loc.Endpoint)
		if err != nil || (e.Scheme != "http" && e.Scheme != "https") || e.Host == "" {
			return Location{}, fmt.Errorf("store URL %q: endpoint must be an http(s) URL", raw)
		}
	}
	return loc, nil
}

// Store is a store.BlobStore on an S3 bucket; see the package comment.
type Store struct {
	client *s3.Client
	loc    Location
	// present remembers blobs this process wrote or found, so a deploy's
	// Has costs no request for content the store is known to hold (only
	// this process's collector deletes blobs, and it forgets them).
	present *hashSet
	// errs counts failed requests (CountErrors); nil: not counted.
	errs atomic.Pointer[store.ErrorCounter]
}

// Open connects to the store at loc. It sends no request: a wrong bucket
// or credentials show on first use (see Check).
func Open(ctx context.Context, loc Location) (*Store, error) {
	var opts []func(*config.LoadOptions) error
	if loc.Region != "" {
		opts = append(opts, config.WithRegion(loc.Region))
	}
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("load S3 credentials: %w", err)
	}
	if cfg.Region == "" {
		cfg.Region = "us-east-1"
	}
	st := &Store{loc: loc, present: newHashSet(presentMax)}
	st.client = s3.NewFromConfig(cfg, func(o *s3.Options) {
		o.APIOptions = append(o.APIOptions, st.countErrors)
		if loc.Endpoint != "" {
			o.BaseEndpoint = aws.String(loc.Endpoint)
			o.UsePathStyle = true
			// S3-compatible servers vary in their support of the
			// newer default checksums; send them only when required.
			o.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenRequired
			o.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenRequired
		}
	})
	return st, nil
}

// Location is where the store lives.
func (s *Store) Location() Location { return s.loc }

// Check asks the server for the bucket, so a wrong endpoint, bucket or
// credentials fail at start rather than on the first deploy.
func (s *Store) Check(ctx context.Context) error {
	if _, err := s.client.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String(s.loc.Bucket)}); err != nil {
		return fmt.Errorf("S3 bucket %s: %w", s.loc.Bucket, err)
	}
	return nil
}

// key is the full object key of a key relative to the prefix.
func (s *Store) key(rel string) string { return s.loc.Prefix + rel }

// ErrNotFound is returned by GetObject for a missing object.
var ErrNotFound = errors.New("object not found")

// ErrNotModified is returned by GetObjectIfNoneMatch when the object
// still has the ETag given.
var ErrNotModified = errors.New("object not modified")

// ErrPrecondition is returned by PutObject when its condition failed:
// the object changed since its ETag was read, or exists when it should
// not.
var ErrPrecondition = errors.New("precondition failed")
