package hooks

import "sitedrop/hooks/pages"

// maxKeyNameLen is the account page's bound on an API key's name, which
// the page tests fill to.
const maxKeyNameLen = pages.MaxKeyNameLen
