package server

import (
	"net/http"
	"strconv"
	"strings"
)

// WaitsToSendBody tells an HTTP/1 request whose client waits for
// "100 Continue" before it sends its body (the CLI's uploads).
func WaitsToSendBody(r *http.Request) bool {
	return r.ProtoMajor == 1 && r.ContentLength != 0 && strings.EqualFold(r.Header.Get("Expect"), "100-continue")
}

// RefuseWaitingBody answers status with the JSON body to a client that
// has not sent its request's body (WaitsToSendBody), at once and closing
// the connection, so that it sends nothing. net/http does that itself
// when it sees such a request unread, but PocketBase's router hides the
// body it recognises them by; and the router's deferred close of the body
// would wait for up to 256 KiB of it (which the client only sends after
// its own timeout) before the answer left. So the answer has its length
// and is flushed here.
func RefuseWaitingBody(w http.ResponseWriter, status int, body []byte) error {
	h := w.Header()
	h.Set("Connection", "close")
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	if _, err := w.Write(body); err != nil {
		return err
	}
	return http.NewResponseController(w).Flush()
}
