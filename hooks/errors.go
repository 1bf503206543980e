package hooks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tools/hook"
	"github.com/pocketbase/pocketbase/tools/router"

	"sitedrop/sites"
	"sitedrop/sites/accounts"
	"sitedrop/sites/agent"
	"sitedrop/sites/analytics/statsdb"
	"sitedrop/sites/domains"
	"sitedrop/sites/forms"
	"sitedrop/sites/intake"
	"sitedrop/sites/ratelimit"
)

// Messages of the API contract (the README's Errors section). Tests assert
// them.
const (
	msgUnauthorized      = "Unauthorized"
	msgNotFound          = "Deployment not found"
	msgSlotLimit         = "Deployment limit reached. Delete an existing deployment or upgrade your plan."
	msgSlugTaken         = "Slug already taken"
	msgSlugReserved      = "Slug is reserved"
	msgHTMLRequired      = "html is required"
	msgBothContent       = "Provide either html or files, not both"
	msgSlugImmutable     = "slug cannot be changed"
	msgInvalidClaimToken = "Invalid claim token"
	msgRateLimited       = "Rate limit exceeded"
	msgMethodNotAllowed  = "Method not allowed"
	msgRouteNotFound     = "Not found"
	msgInternal          = "Internal server error"
	msgClientClosed      = "Client closed the request"
	msgServerBusy        = "Server busy: try again"
)

// statusClientClosed is the status logged for a request whose client went
// away before it was answered (nginx's 499): no answer reaches anyone, and
// the log should not count it as the server's failure.
const statusClientClosed = 499

// apiError is an error a handler returns to answer with a status and an
// exact message: {"error": Message}. RetryAfter, when set, is the
// answer's Retry-After in seconds: an error made away from the request's
// goroutine (a deploy's compression workers) carries it there, since only
// that goroutine may write the response's headers.
type apiError struct {
	Status     int
	Message    string
	RetryAfter int
}

// setRetryAfter sets the Retry-After header of ae, when it has one, on
// e's response; call it from the request's goroutine.
func setRetryAfter(e *core.RequestEvent, ae *apiError) {
	if ae.RetryAfter > 0 {
		e.Response.Header().Set("Retry-After", strconv.Itoa(ae.RetryAfter))
	}
}

func (e *apiError) Error() string { return e.Message }

func fail(status int, format string, args ...any) *apiError {
	if len(args) > 0 {
		format = fmt.Sprintf(format, args...)
	}
	return &apiError{Status: status, Message: format}
}

// toAPIError maps any error from a handler to the status and message the
// client sees: an *apiError as it is, a domain package's error by its
// mapping (domainMappings), a cancelled request as 499, PocketBase's
// router errors in sitedrop's words. Errors that are not the client's
// become a 500 with a generic message (the real one goes to the log).
func toAPIError(err error) (*apiError, bool) {
	for _, m := range domainMappings {
		if ae, ok := m(err); ok {
			return ae, true
		}
	}
	var re *router.ApiError
	switch {
	case errors.Is(err, context.Canceled):
		return fail(statusClientClosed, msgClientClosed), true
	case errors.As(err, &re):
		switch re.Status {
		case http.StatusNotFound:
			return fail(http.StatusNotFound, msgRouteNotFound), true
		case http.StatusTooManyRequests:
			return fail(http.StatusTooManyRequests, msgRateLimited), true
		}
		if re.Status >= 400 && re.Status < 500 {
			return fail(re.Status, strings.TrimSuffix(re.Message, ".")), true
		}
	}
	return fail(http.StatusInternalServerError, msgInternal), false
}

// domainMappings map the errors of the routes (*apiError) and of each
// domain package to the API's answers, in this order; each returns false
// for an error that is not its package's.
var domainMappings = []func(error) (*apiError, bool){
	formsAPIError,
	intakeAPIError,
	accountsAPIError,
	routeAPIError,
	sitesAPIError,
	statsAPIError,
	domainsAPIError,
	agentAPIError,
}

// routeAPIError is an *apiError a handler or middleware made, as it is.
func routeAPIError(err error) (*apiError, bool) {
	var ae *apiError
	if errors.As(err, &ae) {
		return ae, true
	}
	return nil, false
}

// sitesAPIError maps the errors of sites (deployments, their slugs,
// content, rules, versions and claims).
func sitesAPIError(err error) (*apiError, bool) {
	var se *sites.SlugError
	var pe *sites.PathError
	var arc *sites.ArchiveError
	var rle *sites.RuleLimitError
	var fe *sites.FieldError
	var che *sites.ContentHashError
	switch {
	case errors.As(err, &fe):
		return fail(http.StatusBadRequest, "%s", fe.Msg), true
	// a version or an alias of a deployment found is not the deployment
	case errors.Is(err, sites.ErrVersionNotFound):
		return fail(http.StatusNotFound, msgVersionNotFound), true
	case errors.Is(err, sites.ErrAliasNotFound):
		return fail(http.StatusNotFound, msgAliasNotFound), true
	case errors.As(err, &se):
		return fail(http.StatusBadRequest, se.Msg), true
	case errors.As(err, &pe):
		return fail(http.StatusBadRequest, pe.Error()), true
	case errors.As(err, &arc):
		return fail(arc.Status, arc.Msg), true
	case errors.As(err, &rle):
		return fail(http.StatusBadRequest, rle.Msg), true
	case errors.As(err, &che):
		return fail(http.StatusBadRequest, "%s", che.Error()), true
	case errors.Is(err, sites.ErrNotFound):
		return fail(http.StatusNotFound, msgNotFound), true
	case errors.Is(err, sites.ErrSlugTaken):
		return fail(http.StatusConflict, msgSlugTaken), true
	case errors.Is(err, sites.ErrSlugReserved):
		return fail(http.StatusConflict, msgSlugReserved), true
	case errors.Is(err, sites.ErrSlotLimit):
		return fail(http.StatusForbidden, msgSlotLimit), true
	case errors.Is(err, sites.ErrInvalidClaimToken):
		return fail(http.StatusBadRequest, msgInvalidClaimToken), true
	case errors.Is(err, sites.ErrPaused):
		return &apiError{Status: http.StatusServiceUnavailable, Message: msgSitePaused, RetryAfter: pausedRetryAfter}, true
	}
	return nil, false
}

// statsAPIError maps the errors of sites/analytics/statsdb: a period's
// bounds.
func statsAPIError(err error) (*apiError, bool) {
	switch {
	case errors.Is(err, statsdb.ErrPeriodDate):
		return fail(http.StatusBadRequest, msgAnalyticsDate), true
	case errors.Is(err, statsdb.ErrPeriodOrder):
		return fail(http.StatusBadRequest, msgAnalyticsOrder), true
	case errors.Is(err, statsdb.ErrPeriodRange):
		return fail(http.StatusBadRequest, msgAnalyticsRange), true
	}
	return nil, false
}

// formsAPIError maps the errors of sites/forms (submissions, webhooks).
func formsAPIError(err error) (*apiError, bool) {
	var we *forms.WebhookError
	switch {
	case errors.As(err, &we):
		return fail(http.StatusBadRequest, we.Msg), true
	case errors.Is(err, forms.ErrSubmissionNotFound):
		return fail(http.StatusNotFound, msgSubmissionNotFound), true
	case errors.Is(err, forms.ErrWebhookNotFound):
		return fail(http.StatusNotFound, msgWebhookNotFound), true
	}
	return nil, false
}

// domainsAPIError maps the refusals of sites/domains: 400 for a name
// that is not a domain or is the server's own, 409 for one verified on
// another site, 404 for a domain the deployment does not have, 403 over
// the plan's limit.
func domainsAPIError(err error) (*apiError, bool) {
	var le *domains.LimitError
	switch {
	case errors.As(err, &le):
		return fail(http.StatusForbidden, msgDomainLimit, le.Limit, le.Plan), true
	case errors.Is(err, domains.ErrNotFound):
		return fail(http.StatusNotFound, msgDomainNotFound), true
	case errors.Is(err, domains.ErrTaken):
		return fail(http.StatusConflict, "%s", domains.ErrTaken.Error()), true
	case domains.NameRefusal(err) != nil:
		return fail(http.StatusBadRequest, "%s", domains.NameRefusal(err).Error()), true
	}
	return nil, false
}

// agentAPIError maps the refusals of an MCP body (agent.CheckMessage).
func agentAPIError(err error) (*apiError, bool) {
	switch {
	case errors.Is(err, agent.ErrBatch):
		return fail(http.StatusBadRequest, msgMCPBatch), true
	case errors.Is(err, agent.ErrNotObject):
		return fail(http.StatusBadRequest, msgMCPNotObject), true
	}
	return nil, false
}

// Messages of the sign-in endpoints.
const (
	msgInvalidCode   = "Invalid or expired code"
	msgSignupClosed  = "Sign-up is closed on this server"
	msgEmailRequired = "email is required"
	msgEmailInvalid  = "email is not a valid address"
)

// accountsAPIError maps the refusals of a sign-in (sites/accounts) to the
// API's answers.
func accountsAPIError(err error) (*apiError, bool) {
	switch {
	case errors.Is(err, accounts.ErrInvalidCode):
		return fail(http.StatusBadRequest, msgInvalidCode), true
	case errors.Is(err, accounts.ErrSignupClosed):
		return fail(http.StatusForbidden, msgSignupClosed), true
	case errors.Is(err, accounts.ErrEmailRequired):
		return fail(http.StatusBadRequest, msgEmailRequired), true
	case errors.Is(err, accounts.ErrEmailInvalid):
		return fail(http.StatusBadRequest, msgEmailInvalid), true
	case errors.Is(err, accounts.ErrCodeIDRequired):
		return fail(http.StatusBadRequest, "otp_id is required"), true
	case errors.Is(err, accounts.ErrCodeRequired):
		return fail(http.StatusBadRequest, "code is required"), true
	}
	return nil, false
}

// intakeAPIError maps the refusals of sites/intake (what a client sent:
// its body, its deploy request, the memory and work budgets it needs)
// and of the rate limits (sites/ratelimit) to the API's answers: 413 over
// a size or count limit, 408 too slow, 400 malformed, 429 and 503 with
// Retry-After.
func intakeAPIError(err error) (*apiError, bool) {
	var (
		re *ratelimit.Error
		wb *intake.WorkBudgetError
		tl *intake.TooLargeError
		tm *intake.TooManyFilesError
		st *intake.SiteTooLargeError
		ts *intake.TooSlowError
		iv *intake.InvalidError
	)
	retryAfter := int(intake.RetryAfter / time.Second)
	switch {
	case errors.As(err, &re):
		return rateLimitAPIError(re), true
	case errors.Is(err, intake.ErrBusy):
		return &apiError{Status: http.StatusServiceUnavailable, Message: msgServerBusy, RetryAfter: retryAfter}, true
	case errors.As(err, &wb):
		return &apiError{Status: http.StatusServiceUnavailable, Message: wb.Error(), RetryAfter: retryAfter}, true
	case errors.As(err, &tl):
		return fail(http.StatusRequestEntityTooLarge, "%s", tl.Error()), true
	case errors.As(err, &tm):
		return fail(http.StatusRequestEntityTooLarge, "%s", tm.Error()), true
	case errors.As(err, &st):
		return fail(http.StatusRequestEntityTooLarge, "%s", st.Error()), true
	case errors.As(err, &ts):
		return fail(http.StatusRequestTimeout, "%s", ts.Error()), true
	case errors.Is(err, intake.ErrHTMLRequired):
		return fail(http.StatusBadRequest, msgHTMLRequired), true
	case errors.Is(err, intake.ErrBothContent):
		return fail(http.StatusBadRequest, msgBothContent), true
	case errors.As(err, &iv):
		return fail(http.StatusBadRequest, "%s", iv.Msg), true
	}
	return nil, false
}

// rateLimitAPIError is the 429 of a limit's refusal, with its message
// (the contract's by default) and Retry-After.
func rateLimitAPIError(re *ratelimit.Error) *apiError {
	msg := re.Msg
	if msg == "" {
		msg = msgRateLimited
	}
	return &apiError{Status: http.StatusTooManyRequests, Message: msg, RetryAfter: re.RetryAfterSeconds()}
}

// jsonErrorsMiddleware renders every error of sitedrop's own routes (and
// unknown routes outside /api/ and /_/) as {"error": "..."}. PocketBase's
// /api/ and dashboard keep their own shape.
func jsonErrorsMiddleware() *hook.Handler[*core.RequestEvent] {
	return &hook.Handler[*core.RequestEvent]{
		Id:       jsonErrorsMiddlewareId,
		Priority: jsonErrorsMiddlewarePriority,
		Func: func(e *core.RequestEvent) error {
			if p := e.Request.URL.Path; strings.HasPrefix(p, "/api/") || p == "/_" || strings.HasPrefix(p, "/_/") {
				return e.Next()
			}
			err := e.Next()
			if err == nil || e.Written() {
				return err
			}
			ae, known := toAPIError(err)
			if !known {
				e.App.Logger().Error("request failed", "method", e.Request.Method, "path", e.Request.URL.Path, "error", err)
			}
			setRetryAfter(e, ae)
			if intake.WaitsToSendBody(e.Request) {
				if jerr := refuseWaitingBody(e, ae); jerr != nil {
					return errors.Join(err, jerr)
				}
				return err
			}
			if jerr := e.JSON(ae.Status, map[string]string{"error": ae.Message}); jerr != nil {
				return errors.Join(err, jerr)
			}
			return err
		},
	}
}

// refuseWaitingBody answers ae to a client that has not sent its body
// (intake.RefuseWaitingBody), in the shape e.JSON writes.
func refuseWaitingBody(e *core.RequestEvent, ae *apiError) error {
	body, err := json.Marshal(map[string]string{"error": ae.Message})
	if err != nil {
		return err
	}
	return intake.RefuseWaitingBody(e.Response, ae.Status, append(body, '\n'))
}

// methodNotAllowed answers 405 for a known path with a method it lacks.
func methodNotAllowed(allow string) func(e *core.RequestEvent) error {
	return func(e *core.RequestEvent) error {
		e.Response.Header().Set("Allow", allow)
		return fail(http.StatusMethodNotAllowed, msgMethodNotAllowed)
	}
}

// msgCrossOriginAnonDeploy refuses an anonymous deploy that a browser
// sends from a page of another origin.
const msgCrossOriginAnonDeploy = "Anonymous deploys are refused from pages of other origins: send an API key (Authorization: Bearer <key>)"

// The contract messages of sites/domains' refusals (domainsAPIError).
const (
	// msgDomainLimit is the refusal over the plan's custom domains.
	msgDomainLimit = "Custom domain limit reached (%d on the %s plan). Remove a domain or upgrade your plan."
	// msgDomainNotFound answers a domain the deployment does not have.
	msgDomainNotFound = "Domain not found"
)

// The contract messages of sites/forms' errors (formsAPIError).
const (
	msgSubmissionNotFound = "Submission not found"
	msgWebhookNotFound    = "Webhook not found"
)

// domainRefusal is the answer to err when a client caused it: a limit of
// the routes (*apiError) or a refusal of sites/domains. The pages show
// its message in a flash.
func domainRefusal(err error) (*apiError, bool) {
	if ae, ok := routeAPIError(err); ok {
		return ae, true
	}
	if ae, ok := intakeAPIError(err); ok {
		return ae, true
	}
	return domainsAPIError(err)
}

// The refusals of an MCP body that is not one JSON-RPC message
// (agent.CheckMessage).
const (
	msgMCPBatch     = "JSON-RPC batches are not supported: send one message per request"
	msgMCPNotObject = "The body must be one JSON-RPC message: a JSON object"
)
