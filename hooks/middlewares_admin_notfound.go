package hooks

import (
	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tools/hook"

	"sitedrop/hooks/pages"
)

// adminNotFoundPage is the styled 404 page of the admin dashboard's
// missing pages, for browsers (pages.AdminNotFound).
func adminNotFoundPage(s *pages.Sessions) *hook.Handler[*core.RequestEvent] {
	return &hook.Handler[*core.RequestEvent]{
		Id:       adminNotFoundMiddlewareId,
		Priority: adminNotFoundMiddlewarePriority,
		Func:     pages.AdminNotFound(s),
	}
}
