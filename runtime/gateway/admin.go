package gateway

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/mcpc-dev/mcpc/internal/loopback"
	"github.com/mcpc-dev/mcpc/internal/redact"
)

// The answers of the admin endpoints and every error the gateway writes
// itself, in both profiles, go through one writer and one check.

// writeStatusJSON writes v as indented JSON with Cache-Control: no-store.
// Operators read these: redactFn (the runtime's secrets and, in a host,
// every chat's remote header values) is applied to every string on its own
// (redacting the encoded text could miss an escaped secret, or break the
// JSON). What cannot be redacted is withheld.
func writeStatusJSON(w http.ResponseWriter, code int, v any, redactFn func(string) string) {
	var out bytes.Buffer
	b, err := json.Marshal(v)
	if err == nil {
		b, _, err = redact.JSON(b, redactFn)
	}
	if err == nil {
		err = json.Indent(&out, b, "", "  ")
	}
	if err != nil {
		code = http.StatusInternalServerError
		out.Reset()
		out.WriteString(`{"error": "the answer was withheld: it could not be encoded and checked for secrets"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	out.WriteByte('\n')
	_, _ = w.Write(out.Bytes())
}

// writeStatusError writes {"error": msg} with writeStatusJSON.
func writeStatusError(w http.ResponseWriter, code int, msg string, redact func(string) string) {
	writeStatusJSON(w, code, map[string]string{"error": msg}, redact)
}

// adminAllowed authorizes a request to an admin endpoint and checks its
// method: with a token, "Authorization: Bearer <token>" (401 otherwise);
// without one, only a request addressed to a loopback host name (403
// otherwise: DNS rebinding), the caller then listening on loopback only.
func adminAllowed(w http.ResponseWriter, r *http.Request, token, method string, redact func(string) string) bool {
	if token != "" {
		if !bearerMatches(r, token) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="mcpc"`)
			writeStatusError(w, http.StatusUnauthorized, "the admin endpoints need the header Authorization: Bearer <token>: the token of --admin-token-env, else the one in the admin token file that mcpc run logged", redact)
			return false
		}
	} else if !loopback.HostPort(r.Host) {
		writeStatusError(w, http.StatusForbidden, fmt.Sprintf("Host %q is not a loopback name: without an admin token the admin endpoints answer loopback requests only", r.Host), redact)
		return false
	}
	if r.Method != method {
		w.Header().Set("Allow", method)
		writeStatusError(w, http.StatusMethodNotAllowed, fmt.Sprintf("use %s", method), redact)
		return false
	}
	return true
}
