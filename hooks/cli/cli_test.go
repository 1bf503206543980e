package cli

import (
	"strings"

	"sitedrop/sites/accounts"
)

// keyAlice and keyPia are API keys of the shape a server hands out; the
// fake servers of these tests take any key.
var (
	keyAlice = accounts.APIKeyPrefix + "alice" + strings.Repeat("0", 35)
	keyPia   = accounts.APIKeyPrefix + "pia" + strings.Repeat("0", 37)
)
