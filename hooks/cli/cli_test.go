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

// isBidiOverride tells the bidirectional embedding, override and isolate
// controls (LRE, RLE, PDF, LRO, RLO, LRI, RLI, FSI, PDI).
func isBidiOverride(r rune) bool {
	return (r >= 0x202A && r <= 0x202E) || (r >= 0x2066 && r <= 0x2069)
}
