package s3store

import (
	"context"
	"errors"
	"net/http"

	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/middleware"

	"sitedrop/sites/store"
)

// CountErrors has every failed request to the store counted by c
// (backend "s3", op the S3 operation: GetObject, PutObject,
// ListObjectsV2...), after the SDK's retries. A missing object, an
// unmodified one (304) and a condition not met (409, 412) are answers,
// not failures; nor is a request its caller cancelled.
func (s *Store) CountErrors(c store.ErrorCounter) { s.errs.Store(&c) }

// countErrors is the client's middleware that calls the ErrorCounter.
func (s *Store) countErrors(stack *middleware.Stack) error {
	return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("sitedropCountErrors",
		func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			out, md, err := next.HandleInitialize(ctx, in)
			if err != nil && isFailure(ctx, err) {
				if c := s.errs.Load(); c != nil {
					(*c).StoreError("s3", awsmiddleware.GetOperationName(ctx))
				}
			}
			return out, md, err
		}), middleware.Before)
}

// isFailure reports whether err, a request's, is a failure of the store:
// not a missing object (but a missing bucket is one), an unmodified one
// or a condition not met, nor the end of a cancelled request.
func isFailure(ctx context.Context, err error) bool {
	if ctx.Err() != nil && errors.Is(err, context.Canceled) {
		return false
	}
	switch statusOf(err) {
	case http.StatusNotFound:
		var ae smithy.APIError
		return errors.As(err, &ae) && ae.ErrorCode() == "NoSuchBucket"
	case http.StatusNotModified, http.StatusPreconditionFailed, http.StatusConflict:
		return false
	}
	return true
}
