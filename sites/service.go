package sites

import (
	"sync"
	"time"

	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tools/types"

	"sitedrop/sites/store"
)

// Collection names.
const (
	DeploymentsCollection = "deployments"
	VersionsCollection    = "versions"
	AliasesCollection     = "aliases"
)

// Plans.
const (
	PlanFree = "free"
	PlanPro  = "pro"
)

// The defaults of ServiceConfig, which NewService fills in for zero
// values (the server's flags show them).
const (
	DefaultFreeSlots    = 5
	DefaultProSlots     = 50
	DefaultKeepVersions = 10
)

// ServiceConfig holds the lifecycle rules of a Service.
type ServiceConfig struct {
	// FreeSlots is how many deployments a free account may have (default 5).
	FreeSlots int
	// ProSlots is how many deployments a pro account may have (default 50).
	ProSlots int
	// KeepVersions is how many versions of a deployment are kept, the live
	// one included (default 10). Older ones are pruned on each deploy;
	// the live version, the versions an alias points to and the new one
	// are never pruned, and beyond them the newest KeepVersions-1 others
	// are kept (see pruneVersions).
	KeepVersions int
	// ReservedSlugs are refused on top of the built-in ReservedSlugs.
	ReservedSlugs []string
	// SubmitURL returns the absolute form endpoint of a deployment, which
	// replaces {{SUBMIT_URL}} in its HTML files; nil leaves them as is.
	SubmitURL func(deploymentID string) string
	// Blocklist refuses deploys holding blocked content or redirecting
	// to a blocked target; nil blocks nothing.
	Blocklist *Blocklist
}

// Service is sitedrop's core: it creates, replaces, claims and deletes
// deployments, keeps their content in a store.BlobStore and collects what no
// version references any more. It holds no HTTP code.
type Service struct {
	app   core.App
	store store.BlobStore
	cfg   ServiceConfig

	// gcMu orders blob writes against the collector: a deploy holds it for
	// reading from its first blob write until its version is committed;
	// the collector holds it for writing while it deletes. So no blob a
	// deploy relies on is deleted between its write and its commit.
	gcMu sync.RWMutex

	// deployLocks serialise replaces per deployment (see lockDeployment).
	deployLocks [64]sync.Mutex

	// verified are the live versions whose blobs this process knows
	// present (see verifiedVersions).
	verified verifiedVersions
}

// NewService returns a Service over app's database and the given store.
// Zero config fields take their defaults.
func NewService(app core.App, blobStore store.BlobStore, cfg ServiceConfig) *Service {
	if cfg.FreeSlots <= 0 {
		cfg.FreeSlots = DefaultFreeSlots
	}
	if cfg.ProSlots <= 0 {
		cfg.ProSlots = DefaultProSlots
	}
	if cfg.KeepVersions <= 0 {
		cfg.KeepVersions = DefaultKeepVersions
	}
	return &Service{app: app, store: blobStore, cfg: cfg}
}

// Store is the service's store.BlobStore.
func (s *Service) Store() store.BlobStore { return s.store }

// IsReserved reports whether slug is reserved, built-in or by configuration.
func (s *Service) IsReserved(slug string) bool {
	return IsReservedSlug(slug, s.cfg.ReservedSlugs)
}

// SlotLimit is the number of deployments the plan allows.
func (s *Service) SlotLimit(plan string) int {
	if plan == PlanPro {
		return s.cfg.ProSlots
	}
	return s.cfg.FreeSlots
}

// DBTime formats t the way PocketBase stores dates ("" for the zero
// time), for comparisons in SQL.
func DBTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(types.DefaultDateLayout)
}

// KeepVersions is how many versions of a deployment are kept, the live
// one included.
func (s *Service) KeepVersions() int { return s.cfg.KeepVersions }
