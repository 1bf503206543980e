package hooks

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tools/hook"
	"github.com/pocketbase/pocketbase/tools/router"

	"sitedrop/hooks/internal/apierr"
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
	msgRateLimited       = apierr.MsgRateLimited
	msgMethodNotAllowed  = "Method not allowed"
	msgRouteNotFound     = apierr.MsgRouteNotFound
	msgInternal          = "Internal server error"
	msgClientClosed      = "Client closed the request"
	msgServerBusy        = "Server busy: try again"
)

// statusClientClosed is the status logged for a request whose client went
// away before it was answered (nginx's 499): no answer reaches anyone, and
// the log should not count it as the server's failure.
const statusClientClosed = 499

// toAPIError maps any error from a handler to the status and message the
// client sees: an *apierr.Error as it is, a domain package's error by its
// mapping (domainMappings), a cancelled request as 499, PocketBase's
// router errors in sitedrop's words. Errors that are not the client's
// become a 500 with a generic message (the real one goes to the log).
func toAPIError(err error) (*apierr.Error, bool) {
	for _, m := range domainMappings {
		if ae, ok := m(err); ok {
			return ae, true
		}
	}
	var re *router.ApiError
	switch {
	case errors.Is(err, context.Canceled):
		return apierr.Fail(statusClientClosed, msgClientClosed), true
	case errors.As(err, &re):
		switch re.Status {
		case http.StatusNotFound:
			return apierr.Fail(http.StatusNotFound, msgRouteNotFound), true
		case http.StatusTooManyRequests:
			return apierr.Fail(http.StatusTooManyRequests, msgRateLimited), true
		}
		if re.Status >= 400 && re.Status < 500 {
			return apierr.Fail(re.Status, strings.TrimSuffix(re.Message, ".")), true
		}
	}
	return apierr.Fail(http.StatusInternalServerError, msgInternal), false
}

// domainMappings map the errors of the routes (*apierr.Error) and of each
// domain package to the API's answers, in this order; each returns false
// for an error that is not its package's.
var domainMappings = []func(error) (*apierr.Error, bool){
	formsAPIError,
	blocklistAPIError,
	intakeAPIError,
	accountsAPIError,
	routeAPIError,
	sitesAPIError,
	statsAPIError,
	domainsAPIError,
	agentAPIError,
	abuseAPIError,
}

// routeAPIError is an *apierr.Error a handler or middleware made, as it is.
func routeAPIError(err error) (*apierr.Error, bool) {
	var ae *apierr.Error
	if errors.As(err, &ae) {
		return ae, true
	}
	return nil, false
}

// sitesAPIError maps the errors of sites (deployments, their slugs,
// content, rules, versions and claims).
func sitesAPIError(err error) (*apierr.Error, bool) {
	var se *sites.SlugError
	var pe *sites.PathError
	var arc *sites.ArchiveError
	var rle *sites.RuleLimitError
	var fe *sites.FieldError
	var che *sites.ContentHashError
	switch {
	case errors.As(err, &fe):
		return apierr.Fail(http.StatusBadRequest, "%s", fe.Msg), true
	case errors.Is(err, sites.ErrUserNotFound):
		return apierr.Fail(http.StatusNotFound, msgUserNotFound), true
	// a version or an alias of a deployment found is not the deployment
	case errors.Is(err, sites.ErrVersionNotFound):
		return apierr.Fail(http.StatusNotFound, msgVersionNotFound), true
	case errors.Is(err, sites.ErrAliasNotFound):
		return apierr.Fail(http.StatusNotFound, msgAliasNotFound), true
	case errors.As(err, &se):
		return apierr.Fail(http.StatusBadRequest, se.Msg), true
	case errors.As(err, &pe):
		return apierr.Fail(http.StatusBadRequest, pe.Error()), true
	case errors.As(err, &arc):
		return apierr.Fail(arc.Status, arc.Msg), true
	case errors.As(err, &rle):
		return apierr.Fail(http.StatusBadRequest, rle.Msg), true
	case errors.As(err, &che):
		return apierr.Fail(http.StatusBadRequest, "%s", che.Error()), true
	case errors.Is(err, sites.ErrNotFound):
		return apierr.Fail(http.StatusNotFound, msgNotFound), true
	case errors.Is(err, sites.ErrSlugTaken):
		return apierr.Fail(http.StatusConflict, msgSlugTaken), true
	case errors.Is(err, sites.ErrSlugReserved):
		return apierr.Fail(http.StatusConflict, msgSlugReserved), true
	case errors.Is(err, sites.ErrSlotLimit):
		return apierr.Fail(http.StatusForbidden, msgSlotLimit), true
	case errors.Is(err, sites.ErrInvalidClaimToken):
		return apierr.Fail(http.StatusBadRequest, msgInvalidClaimToken), true
	case errors.Is(err, sites.ErrTakenDown):
		return apierr.Fail(http.StatusForbidden, msgTakenDown), true
	case errors.Is(err, sites.ErrPaused):
		return &apierr.Error{Status: http.StatusServiceUnavailable, Message: msgSitePaused, RetryAfter: pausedRetryAfter}, true
	case errors.Is(err, sites.ErrAwaitingClaim):
		return apierr.Fail(http.StatusForbidden, msgSiteAwaitingClaim), true
	case errors.Is(err, sites.ErrAnonDeploysOff):
		return apierr.Fail(http.StatusForbidden, msgAnonDeploysOff), true
	}
	return nil, false
}

// statsAPIError maps the errors of sites/analytics/statsdb: a period's
// bounds.
func statsAPIError(err error) (*apierr.Error, bool) {
	switch {
	case errors.Is(err, statsdb.ErrPeriodDate):
		return apierr.Fail(http.StatusBadRequest, msgAnalyticsDate), true
	case errors.Is(err, statsdb.ErrPeriodOrder):
		return apierr.Fail(http.StatusBadRequest, msgAnalyticsOrder), true
	case errors.Is(err, statsdb.ErrPeriodRange):
		return apierr.Fail(http.StatusBadRequest, msgAnalyticsRange), true
	}
	return nil, false
}

// formsAPIError maps the errors of sites/forms (submissions, webhooks).
func formsAPIError(err error) (*apierr.Error, bool) {
	var we *forms.WebhookError
	switch {
	case errors.As(err, &we):
		return apierr.Fail(http.StatusBadRequest, we.Msg), true
	case errors.Is(err, forms.ErrSubmissionNotFound):
		return apierr.Fail(http.StatusNotFound, msgSubmissionNotFound), true
	case errors.Is(err, forms.ErrWebhookNotFound):
		return apierr.Fail(http.StatusNotFound, msgWebhookNotFound), true
	}
	return nil, false
}

// domainsAPIError maps the refusals of sites/domains: 400 for a name
// that is not a domain or is the server's own, 409 for one verified on
// another site, 404 for a domain the deployment does not have, 403 over
// the plan's limit.
func domainsAPIError(err error) (*apierr.Error, bool) {
	var le *domains.LimitError
	switch {
	case errors.As(err, &le):
		return apierr.Fail(http.StatusForbidden, msgDomainLimit, le.Limit, le.Plan), true
	case errors.Is(err, domains.ErrNotFound):
		return apierr.Fail(http.StatusNotFound, msgDomainNotFound), true
	case errors.Is(err, domains.ErrTaken):
		return apierr.Fail(http.StatusConflict, "%s", domains.ErrTaken.Error()), true
	case domains.NameRefusal(err) != nil:
		return apierr.Fail(http.StatusBadRequest, "%s", domains.NameRefusal(err).Error()), true
	}
	return nil, false
}

// agentAPIError maps the refusals of an MCP body (agent.CheckMessage).
func agentAPIError(err error) (*apierr.Error, bool) {
	switch {
	case errors.Is(err, agent.ErrBatch):
		return apierr.Fail(http.StatusBadRequest, msgMCPBatch), true
	case errors.Is(err, agent.ErrNotObject):
		return apierr.Fail(http.StatusBadRequest, msgMCPNotObject), true
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
func accountsAPIError(err error) (*apierr.Error, bool) {
	var be *accounts.BannedError
	switch {
	case errors.As(err, &be):
		return bannedAPIError(be), true
	case errors.Is(err, accounts.ErrInvalidCode):
		return apierr.Fail(http.StatusBadRequest, msgInvalidCode), true
	case errors.Is(err, accounts.ErrSignupClosed):
		return apierr.Fail(http.StatusForbidden, msgSignupClosed), true
	case errors.Is(err, accounts.ErrEmailRequired):
		return apierr.Fail(http.StatusBadRequest, msgEmailRequired), true
	case errors.Is(err, accounts.ErrEmailInvalid):
		return apierr.Fail(http.StatusBadRequest, msgEmailInvalid), true
	case errors.Is(err, accounts.ErrCodeIDRequired):
		return apierr.Fail(http.StatusBadRequest, "otp_id is required"), true
	case errors.Is(err, accounts.ErrCodeRequired):
		return apierr.Fail(http.StatusBadRequest, "code is required"), true
	}
	return nil, false
}

// intakeAPIError maps the refusals of sites/intake (what a client sent:
// its body, its deploy request, the memory and work budgets it needs)
// and of the rate limits (sites/ratelimit) to the API's answers: 413 over
// a size or count limit, 408 too slow, 400 malformed, 429 and 503 with
// Retry-After.
func intakeAPIError(err error) (*apierr.Error, bool) {
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
		return apierr.RateLimited(re), true
	case errors.Is(err, intake.ErrBusy):
		return &apierr.Error{Status: http.StatusServiceUnavailable, Message: msgServerBusy, RetryAfter: retryAfter}, true
	case errors.As(err, &wb):
		return &apierr.Error{Status: http.StatusServiceUnavailable, Message: wb.Error(), RetryAfter: retryAfter}, true
	case errors.As(err, &tl):
		return apierr.Fail(http.StatusRequestEntityTooLarge, "%s", tl.Error()), true
	case errors.As(err, &tm):
		return apierr.Fail(http.StatusRequestEntityTooLarge, "%s", tm.Error()), true
	case errors.As(err, &st):
		return apierr.Fail(http.StatusRequestEntityTooLarge, "%s", st.Error()), true
	case errors.As(err, &ts):
		return apierr.Fail(http.StatusRequestTimeout, "%s", ts.Error()), true
	case errors.Is(err, intake.ErrHTMLRequired):
		return apierr.Fail(http.StatusBadRequest, msgHTMLRequired), true
	case errors.Is(err, intake.ErrBothContent):
		return apierr.Fail(http.StatusBadRequest, msgBothContent), true
	case errors.As(err, &iv):
		return apierr.Fail(http.StatusBadRequest, "%s", iv.Msg), true
	}
	return nil, false
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
			ae.SetRetryAfter(e.Response.Header())
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
func refuseWaitingBody(e *core.RequestEvent, ae *apierr.Error) error {
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
		return apierr.Fail(http.StatusMethodNotAllowed, msgMethodNotAllowed)
	}
}

// msgAnonDeploysOff refuses an anonymous deploy while an administrator
// has turned them off (the sitedrop settings record, or --anon-deploys).
const msgAnonDeploysOff = "Anonymous deploys are turned off on this server: sign in and deploy with an API key (Authorization: Bearer <key>)"

// msgSiteAwaitingClaim answers a form posted to an anonymous site held
// unserved until claimed.
const msgSiteAwaitingClaim = "This site is not shown until it is claimed: its forms take no submissions until then"

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
// the routes (*apierr.Error) or a refusal of sites/domains. The pages show
// its message in a flash.
func domainRefusal(err error) (*apierr.Error, bool) {
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
