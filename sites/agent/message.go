package agent

import (
	"bytes"
	"errors"
)

// The refusals of CheckMessage. The server answers both with a 400 and a
// message of its contract.
var (
	// ErrBatch is a body that is a JSON-RPC batch (a JSON array).
	ErrBatch = errors.New("agent: a JSON-RPC batch")
	// ErrNotObject is a body that is neither a JSON object nor a batch.
	ErrNotObject = errors.New("agent: not a JSON-RPC message object")
)

// CheckMessage checks that body, an MCP request's, is one JSON-RPC
// message, a JSON object, as the Streamable HTTP transport carries it
// since the protocol revision 2025-06-18 (which dropped batches). A batch
// (a JSON array) is refused whatever revision the client claims
// (ErrBatch): the SDK would answer each of its messages, holding the
// whole answer, at no cost to the client. Anything else that does not
// start as an object is refused too (ErrNotObject); the SDK decodes the
// object.
func CheckMessage(body []byte) error {
	body = bytes.TrimLeft(body, " \t\r\n") // JSON's white space
	switch {
	case len(body) > 0 && body[0] == '{':
		return nil
	case len(body) > 0 && body[0] == '[':
		return ErrBatch
	}
	return ErrNotObject
}
