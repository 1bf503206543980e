package hooks

import (
	"bytes"
	"net/http"
)

// The refusals of an MCP body that is not one JSON-RPC message.
const (
	msgMCPBatch     = "JSON-RPC batches are not supported: send one message per request"
	msgMCPNotObject = "The body must be one JSON-RPC message: a JSON object"
)

// checkMCPMessage checks that body, an MCP request's, is one JSON-RPC
// message, a JSON object, as the Streamable HTTP transport carries it
// since the protocol revision 2025-06-18 (which dropped batches). A batch
// (a JSON array) is refused whatever revision the client claims: the SDK
// would answer each of its messages, holding the whole answer, at no cost
// to the client. Anything else that does not start as an object is
// refused too; the SDK decodes the object. Both are 400.
func checkMCPMessage(body []byte) error {
	body = bytes.TrimLeft(body, " \t\r\n") // JSON's white space
	switch {
	case len(body) > 0 && body[0] == '{':
		return nil
	case len(body) > 0 && body[0] == '[':
		return fail(http.StatusBadRequest, msgMCPBatch)
	}
	return fail(http.StatusBadRequest, msgMCPNotObject)
}
