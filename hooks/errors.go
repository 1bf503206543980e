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

	"github.com/pocketbase/pocketbase/apis"
	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tools/hook"
	"github.com/pocketbase/pocketbase/tools/router"

	"sitedrop/sites"
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
// client sees. Errors that are not the client's become a 500 with a
// generic message (the real one goes to the log).
func toAPIError(err error) (*apiError, bool) {
	var ae *apiError
	var se *sites.SlugError
	var pe *sites.PathError
	var arc *sites.ArchiveError
	var rle *sites.RuleLimitError
	var re *router.ApiError
	if ae, ok := formsAPIError(err); ok {
		return ae, true
	}
	if ae, ok := intakeAPIError(err); ok {
		return ae, true
	}
	switch {
	case errors.As(err, &ae):
		return ae, true
	case errors.As(err, &se):
		return fail(http.StatusBadRequest, se.Msg), true
	case errors.As(err, &pe):
		return fail(http.StatusBadRequest, pe.Error()), true
	case errors.As(err, &arc):
		return fail(arc.Status, arc.Msg), true
	case errors.As(err, &rle):
		return fail(http.StatusBadRequest, rle.Msg), true
	case errors.Is(err, sites.ErrNotFound):
		return fail(http.StatusNotFound, msgNotFound), true
	case errors.Is(err, sites.ErrSlugTaken):
		return fail(http.StatusConflict, msgSlugTaken), true
	case errors.Is(err, sites.ErrSlugReserved):
		return fail(http.StatusConflict, msgSlugReserved), true
	case errors.Is(err, sites.ErrSlotLimit):
		return fail(http.StatusForbidden, msgSlotLimit), true
	case errors.Is(err, sites.ErrVersionNotFound):
		return fail(http.StatusNotFound, msgVersionNotFound), true
	case errors.Is(err, sites.ErrInvalidClaimToken):
		return fail(http.StatusBadRequest, msgInvalidClaimToken), true
	// analytics (statsdb): a period's bounds
	case errors.Is(err, statsdb.ErrPeriodDate):
		return fail(http.StatusBadRequest, msgAnalyticsDate), true
	case errors.Is(err, statsdb.ErrPeriodOrder):
		return fail(http.StatusBadRequest, msgAnalyticsOrder), true
	case errors.Is(err, statsdb.ErrPeriodRange):
		return fail(http.StatusBadRequest, msgAnalyticsRange), true
	case isDomainError(err):
		return domainAPIError(err), true
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

// formsAPIError maps the domain errors of sites/forms (submissions,
// webhooks) to the API's answers.
func formsAPIError(err error) (*apiError, bool) {
	var we *forms.WebhookError
	switch {
	case errors.As(err, &we):
		return fail(http.StatusBadRequest, we.Msg), true
	case errors.Is(err, forms.ErrSubmissionNotFound):
		return fail(http.StatusNotFound, "Submission not found"), true
	case errors.Is(err, forms.ErrWebhookNotFound):
		return fail(http.StatusNotFound, "Webhook not found"), true
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
		Id:       "sitedropJSONErrors",
		Priority: apis.DefaultActivityLoggerMiddlewarePriority + 1,
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
			if waitsToSendBody(e.Request) {
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

// waitsToSendBody tells an HTTP/1 request whose client waits for
// "100 Continue" before it sends its body (the CLI's uploads).
func waitsToSendBody(r *http.Request) bool {
	return intake.WaitsToSendBody(r)
}

// refuseWaitingBody answers an error to a client that has not sent its
// body, at once and closing the connection, so that it sends nothing.
// net/http does that itself when it sees such a request unread, but
// PocketBase's router hides the body it recognises them by; and the
// router's deferred close of the body would wait for up to 256 KiB of it
// (which the client only sends after its own timeout) before the answer
// left. So the answer has its length and is flushed here.
func refuseWaitingBody(e *core.RequestEvent, ae *apiError) error {
	body, err := json.Marshal(map[string]string{"error": ae.Message})
	if err != nil {
		return err
	}
	body = append(body, '\n') // as e.JSON writes it
	h := e.Response.Header()
	h.Set("Connection", "close")
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	e.Response.WriteHeader(ae.Status)
	if _, err := e.Response.Write(body); err != nil {
		return err
	}
	return http.NewResponseController(e.Response).Flush()
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

// Custom domains (sites/domains): the errors of domains.Service and
// their contract messages.

// msgDomainLimit is the refusal over the plan's custom domains.
const msgDomainLimit = "Custom domain limit reached (%d on the %s plan). Remove a domain or upgrade your plan."

// msgDomainNotFound answers a domain the deployment does not have.
const msgDomainNotFound = "Domain not found"

// isDomainError reports whether err is one of sites/domains' refusals.
func isDomainError(err error) bool {
	var le *domains.LimitError
	return domains.NameRefusal(err) != nil || errors.Is(err, domains.ErrTaken) || errors.Is(err, domains.ErrNotFound) ||
		errors.As(err, &le)
}

// domainAPIError is the answer to one of sites/domains' refusals
// (isDomainError): 400 for a name that is not a domain or is the
// server's own, 409 for one verified on another site, 404 for a domain
// the deployment does not have, 403 over the plan's limit.
func domainAPIError(err error) *apiError {
	var le *domains.LimitError
	switch {
	case errors.As(err, &le):
		return fail(http.StatusForbidden, msgDomainLimit, le.Limit, le.Plan)
	case errors.Is(err, domains.ErrNotFound):
		return fail(http.StatusNotFound, msgDomainNotFound)
	case errors.Is(err, domains.ErrTaken):
		return fail(http.StatusConflict, "%s", domains.ErrTaken.Error())
	case domains.NameRefusal(err) != nil:
		return fail(http.StatusBadRequest, "%s", domains.NameRefusal(err).Error())
	}
	return fail(http.StatusInternalServerError, msgInternal)
}

// domainRefusal is the answer to err when a client caused it: a limit of
// the routes (*apiError) or a refusal of sites/domains. The pages show
// its message in a flash.
func domainRefusal(err error) (*apiError, bool) {
	var ae *apiError
	if errors.As(err, &ae) {
		return ae, true
	}
	if isDomainError(err) {
		return domainAPIError(err), true
	}
	return nil, false
}
