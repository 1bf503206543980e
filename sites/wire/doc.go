// Package wire holds the JSON bodies of sitedrop's HTTP API, once: the
// requests a client sends and the answers the server gives. The server
// (hooks) encodes its answers from these types, the client (sites/client,
// which the sitedrop command and the MCP tools use) decodes them into the
// same types, and the API's description (openapi.json, served by hooks
// through OpenAPIFor) is checked against them, field by field, by hooks' drift test.
//
// A type here is a contract: renaming a JSON tag, or adding or removing a
// field, changes the API. The types hold data only (no behaviour beyond
// encoding), and the package imports nothing of the module, so that any
// side of the wire can use it.
//
// A server answer is built and sent as it is:
//
//	return e.JSON(http.StatusOK, wire.DeployAnswer{DeployRef: ref, Warnings: ws, Report: rep})
//
// and a client reads it back:
//
//	var ans wire.DeployAnswer
//	err := c.Do("POST", "/deploy", req, "", &ans)
//	if ans.Claim != nil { … an anonymous deployment: ans.ClaimURL … }
package wire
