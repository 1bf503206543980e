// Package routectx is what the API's and the pages' route middlewares
// leave on a request event for its handler (the caller, its deployment),
// and the shape of such a middleware: one definition both use.
package routectx

import (
	"time"

	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tools/hook"
)

// The keys under which the auth middlewares leave what they found on the
// request event (e.Set).
const (
	userKey       = "sitedropUser"
	deploymentKey = "sitedropDeployment"
)

// Middleware is a route middleware (Bind) under the id that names it in
// the chain.
func Middleware(id string, f func(e *core.RequestEvent) error) *hook.Handler[*core.RequestEvent] {
	return &hook.Handler[*core.RequestEvent]{Id: id, Func: f}
}

// SetUser leaves the caller on e.
func SetUser(e *core.RequestEvent, user *core.Record) { e.Set(userKey, user) }

// SetDeployment leaves the caller's deployment on e.
func SetDeployment(e *core.RequestEvent, dep *core.Record) { e.Set(deploymentKey, dep) }

// User is the caller a middleware left on e (nil: none, an anonymous
// caller).
func User(e *core.RequestEvent) *core.Record {
	u, _ := e.Get(userKey).(*core.Record)
	return u
}

// Deployment is the caller's deployment a middleware left on e.
func Deployment(e *core.RequestEvent) *core.Record {
	d, _ := e.Get(deploymentKey).(*core.Record)
	return d
}

// Timestamp is t as the API and the pages write a time: RFC 3339 in UTC.
func Timestamp(t time.Time) string {
	return t.UTC().Format(time.RFC3339)
}
