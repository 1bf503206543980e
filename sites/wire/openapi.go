package wire

import (
	_ "embed" // openapi.json
	"encoding/json"
	"fmt"
)

// openAPIDoc is the OpenAPI 3.1 description of the HTTP API (the README's
// API table), written by hand beside the types it describes. Its servers
// entry is a placeholder: OpenAPIFor names a server's web URL. hooks'
// tests validate every answer of a described route against it, and a
// drift test keeps its paths equal to the routes registered and its
// schemas equal to these types.
//
//go:embed openapi.json
var openAPIDoc []byte

// OpenAPI is the API's description as written (a copy: the caller may
// keep or change it).
func OpenAPI() []byte { return append([]byte(nil), openAPIDoc...) }

// OpenAPIFor is the API's description with its servers set to webURL,
// the copy a server serves at /openapi.json.
func OpenAPIFor(webURL string) ([]byte, error) {
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(openAPIDoc, &doc); err != nil {
		return nil, fmt.Errorf("openapi.json: %w", err)
	}
	servers, err := json.Marshal([]map[string]string{{"url": webURL, "description": "this server"}})
	if err != nil {
		return nil, fmt.Errorf("openapi servers: %w", err)
	}
	doc["servers"] = servers
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("openapi.json: %w", err)
	}
	return out, nil
}
