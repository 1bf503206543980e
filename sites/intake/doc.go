// Package intake reads what clients send, within the server's means:
// request bodies at a minimum rate and within a byte limit (Guards.Body),
// the memory they and what is made of them hold (Budget, Lease; the
// answers made after an action, AnswerMemory), the
// deploy request (Request: a JSON body or an archive with its metadata in
// the query, its protection fields: the body is sites/wire's
// DeployRequest), the work budget of a deploy (Work)
// and the deploy gate (Gate: rate limits and processing slots).
//
// It works on net/http's request and response, free of routing and of
// PocketBase. Its refusals are domain errors (*TooLargeError,
// *TooSlowError, *InvalidError, *TooManyFilesError, *SiteTooLargeError,
// *WorkBudgetError, ErrBusy, ErrHTMLRequired, ErrBothContent; the limits'
// *ratelimit.Error) that carry what was wrong, never an HTTP status: the
// bindings map them to the contract's answers.
//
// A deploy handler reads its request like this:
//
//	lease := guards.MemoryLease(r.Context())
//	defer lease.End()
//	req, release, err := deploys.Read(w, r, lease, anon, precheck)
//	if err != nil {
//		return err
//	}
//	defer release()
//	work := guards.StartWork(r.Context(), anon)
//	defer work.End()
//	c, err := deploys.Content(work, req, deploys.StoredContent(r.Context(), blobs, lease), lease, sites.RuleLimitOf(owner))
//	if err != nil {
//		return err
//	}
//	… deploy c.Meta and c.Upload within work.Ctx; an error past the budget: work.Over(err)
package intake
