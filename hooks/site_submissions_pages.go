package hooks

import (
	"errors"

	"github.com/pocketbase/pocketbase/core"

	"sitedrop/sites/forms"
	"sitedrop/ui"
)

// accountSubmissionDelete is a submission's delete button on the site page.
func (sp *sitePages) accountSubmissionDelete(e *core.RequestEvent) error {
	dep := ownedOf(e)
	if _, err := forms.DeleteSubmission(e.App, dep.Id, e.Request.PathValue("subId")); errors.Is(err, forms.ErrSubmissionNotFound) {
		// Gone already (a second click, a reload): say so, change nothing.
		return sp.backToSite(e, dep, ui.FlashError, "That submission no longer exists.")
	} else if err != nil {
		return err
	}
	return sp.backToSite(e, dep, ui.FlashSuccess, "Submission deleted.")
}
