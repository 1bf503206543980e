package hooks

import (
	"errors"

	validation "github.com/pocketbase/ozzo-validation/v4"
	"github.com/pocketbase/pocketbase/core"

	"sitedrop/sites"
)

// bindSettingsHooks keeps the sitedrop settings record valid, and one,
// from every writer (the dashboard, sites.InstanceSettings.SaveOverrides), and
// reloads settings' copy of it once a save or delete is committed, so
// the next request meets the new rules without a restart.
func bindSettingsHooks(app core.App, settings *sites.InstanceSettings) {
	app.OnRecordValidate(sites.SettingsCollection).BindFunc(func(e *core.RecordEvent) error {
		err := sites.CheckSettingsRecord(e.App, e.Record)
		var fe *sites.FieldError
		switch {
		case errors.As(err, &fe):
			return validation.Errors{fe.Field: validation.NewError("validation_invalid_setting", fe.Msg)}
		case errors.Is(err, sites.ErrSettingsExists):
			return validation.Errors{"id": validation.NewError("validation_settings_exist", err.Error())}
		case err != nil:
			return err
		}
		return e.Next()
	})
	reload := func(e *core.RecordEvent) error {
		if _, err := settings.Reload(); err != nil {
			e.App.Logger().Warn("sitedrop settings: reload", "error", err)
		}
		return e.Next()
	}
	app.OnRecordAfterCreateSuccess(sites.SettingsCollection).BindFunc(reload)
	app.OnRecordAfterUpdateSuccess(sites.SettingsCollection).BindFunc(reload)
	app.OnRecordAfterDeleteSuccess(sites.SettingsCollection).BindFunc(reload)
}
