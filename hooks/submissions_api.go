package hooks

import (
	"net/http"
	"strconv"

	"sitedrop/hooks/internal/apierr"
	"sitedrop/sites/forms"

	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tools/router"
)

// Paging and export limits of GET /submissions.
const (
	defaultSubmissionsLimit = 50
	maxSubmissionsLimit     = 200
	maxPage                 = 1000000
)

// bindSubmissionsAPI registers the owner's view of form submissions.
func bindSubmissionsAPI(r *router.Router[*core.RequestEvent], auth *apiAuth) {
	r.GET("/submissions/{deployId}", submissionsList).Bind(auth.requireOwner("deployId"))                    // newest first, paged; ?format=csv
	r.DELETE("/submissions/{deployId}/{submissionId}", submissionDelete).Bind(auth.requireOwner("deployId")) // remove one
	r.Any("/submissions/{deployId}", methodNotAllowed("GET"))
	r.Any("/submissions/{deployId}/{submissionId}", methodNotAllowed("DELETE"))
}

// submissionsList is GET /submissions/{deployId}?page=&limit=&format=.
func submissionsList(e *core.RequestEvent) error {
	dep := ownedOf(e)
	q := e.Request.URL.Query()
	if f := q.Get("format"); f == "csv" {
		return submissionsCSV(e, dep)
	} else if f != "" && f != "json" {
		return apierr.Fail(http.StatusBadRequest, "format must be json or csv")
	}
	page, err := positiveParam(q.Get("page"), 1, maxPage, "page")
	if err != nil {
		return err
	}
	limit, err := positiveParam(q.Get("limit"), defaultSubmissionsLimit, maxSubmissionsLimit, "limit")
	if err != nil {
		return err
	}
	total, err := forms.CountSubmissions(e.App, dep.Id)
	if err != nil {
		return err
	}
	subs, err := forms.FindSubmissions(e.App, dep.Id, limit, (page-1)*limit)
	if err != nil {
		return err
	}
	out := make([]*forms.SubmissionJSON, 0, len(subs))
	for _, s := range subs {
		out = append(out, s.JSON())
	}
	return e.JSON(http.StatusOK, map[string]any{"submissions": out, "page": page, "limit": limit, "total": total})
}

// submissionDelete is DELETE /submissions/{deployId}/{submissionId}.
func submissionDelete(e *core.RequestEvent) error {
	dep := ownedOf(e)
	sub, err := forms.DeleteSubmission(e.App, dep.Id, e.Request.PathValue("submissionId"))
	if err != nil {
		return err // forms.ErrSubmissionNotFound: 404
	}
	return e.JSON(http.StatusOK, map[string]string{"id": sub.Id, "message": "Submission deleted"})
}

// positiveParam reads a positive integer query parameter (def when empty,
// at most max when max > 0).
func positiveParam(raw string, def, max int, name string) (int, error) {
	if raw == "" {
		return def, nil
	}
	n, err := strconv.Atoi(raw)
	if err != nil || n < 1 || (max > 0 && n > max) {
		if max > 0 {
			return 0, apierr.Fail(http.StatusBadRequest, "%s must be a whole number from 1 to %d", name, max)
		}
		return 0, apierr.Fail(http.StatusBadRequest, "%s must be a whole number from 1", name)
	}
	return n, nil
}
