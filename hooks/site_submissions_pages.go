package hooks

import (
	"github.com/pocketbase/pocketbase/core"

	"sitedrop/sites/forms"
	"sitedrop/ui"
)

// accountSubmissionDelete is a submission's delete button on the site page.
func (sd *sitedrop) accountSubmissionDelete(e *core.RequestEvent) error {
	dep, err := sd.formSite(e)
	if dep == nil {
		return err
	}
	sub, err := e.App.FindRecordById(forms.SubmissionsCollection, e.Request.PathValue("subId"))
	if err != nil || sub.GetString("deployment") != dep.Id {
		// Gone already (a second click, a reload): say so, change nothing.
		return sd.backToSite(e, dep, ui.FlashError, "That submission no longer exists.")
	}
	if err := e.App.Delete(sub); err != nil {
		return err
	}
	return sd.backToSite(e, dep, ui.FlashSuccess, "Submission deleted.")
}
