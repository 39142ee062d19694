package transport

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	segjson "github.com/segmentio/encoding/json"
)

// JSON-RPC ids, kept exactly. A response's id must be the request's (JSON-RPC
// 2.0, section 5), but the SDK's jsonrpc.ID holds only an int64 or a string:
// its decoder makes 1.5 into 1 and 18446744073709551616 into
// -9223372036854775808, and a string comes back with its escapes rewritten.
// So the decoder (decodeID) gives an id that an int64 or a string does not
// hold byte for byte a string form of its own, rawIDPrefix followed by the
// id's JSON text, and EncodeMessage writes that text back. Every message
// these transports write goes through EncodeMessage.
//
// The mapping is one to one: a string id that itself starts with
// rawIDPrefix is kept in the raw form too, so no id a peer sends can pass
// for another. The SDK only compares ids and copies them, so it never sees
// the difference; notifications/cancelled names its request by the same
// form (cancelledParams).

// rawIDPrefix starts the string an ID holds for an id kept as its JSON text.
// The NUL makes it a string no ordinary client sends.
const rawIDPrefix = "\x00mcpc-raw-id:"

// decodeID makes the id of a message from its JSON text: nil (absent) or
// null is no id, an integer of at most 2^53 written as strconv.FormatInt
// writes it is an int64 id, a string that the SDK's encoder writes back the same is a
// string id, and any other number or string is kept as its text.
func decodeID(raw json.RawMessage) (jsonrpc.ID, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return jsonrpc.ID{}, nil
	}
	switch c := raw[0]; {
	case c == '"':
		var s string
		if _, err := segjson.Parse(raw, &s, 0); err != nil {
			return jsonrpc.ID{}, errBadID
		}
		if !strings.HasPrefix(s, rawIDPrefix) && bytes.Equal(encodeString(s), raw) {
			return jsonrpc.MakeID(s)
		}
	case c == '-' || ('0' <= c && c <= '9'):
		// The package makes an int64 id only from a float64: exact up to
		// 2^53.
		if n, err := strconv.ParseInt(string(raw), 10, 64); err == nil && strconv.FormatInt(n, 10) == string(raw) && -maxExactInt <= n && n <= maxExactInt {
			return jsonrpc.MakeID(float64(n))
		}
	default:
		return jsonrpc.ID{}, errBadID
	}
	return jsonrpc.MakeID(rawIDPrefix + string(raw))
}

// maxExactInt is the largest integer every smaller one of which a float64
// holds exactly.
const maxExactInt = 1 << 53

var errBadID = errors.New("the id is neither a string nor a number")

// encodeString is s as the SDK's encoder writes it (no HTML escaping).
func encodeString(s string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// rawID returns the JSON text of an id kept as text by decodeID.
func rawID(id jsonrpc.ID) (string, bool) {
	s, ok := id.Raw().(string)
	if !ok {
		return "", false
	}
	return strings.CutPrefix(s, rawIDPrefix)
}

// IDText is an id as it came on the wire, for messages: 1.5, "a-1".
func IDText(id jsonrpc.ID) string {
	if raw, ok := rawID(id); ok {
		return raw
	}
	if s, ok := id.Raw().(string); ok {
		return string(encodeString(s))
	}
	return fmt.Sprint(id.Raw())
}

// messageID is the id of a request or response.
func messageID(msg jsonrpc.Message) jsonrpc.ID {
	switch m := msg.(type) {
	case *jsonrpc.Request:
		return m.ID
	case *jsonrpc.Response:
		return m.ID
	}
	return jsonrpc.ID{}
}

// EncodeMessage encodes msg as jsonrpc.EncodeMessage does, with an id kept
// as text (decodeID) written back as that text.
func EncodeMessage(msg jsonrpc.Message) ([]byte, error) {
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return nil, err
	}
	raw, ok := rawID(messageID(msg))
	if !ok {
		return data, nil
	}
	// The SDK's encoding, its id replaced; the fields in the SDK's order.
	var wire struct {
		VersionTag json.RawMessage `json:"jsonrpc"`
		ID         json.RawMessage `json:"id,omitempty"`
		Method     json.RawMessage `json:"method,omitempty"`
		Params     json.RawMessage `json:"params,omitempty"`
		Result     json.RawMessage `json:"result,omitempty"`
		Error      json.RawMessage `json:"error,omitempty"`
	}
	if err := json.Unmarshal(data, &wire); err != nil {
		return nil, fmt.Errorf("marshaling jsonrpc message: %w", err)
	}
	wire.ID = json.RawMessage(raw)
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(&wire); err != nil {
		return nil, fmt.Errorf("marshaling jsonrpc message: %w", err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// methodCancelled is the notification that cancels a request by its id.
const methodCancelled = "notifications/cancelled"

// cancelledParams gives the requestId of a notifications/cancelled the form
// decodeID gave the request's id, so that the SDK finds the request: it
// decodes requestId itself, as a float64 (1.5 would cancel request 1).
// Params it cannot read go on unchanged, for the SDK to refuse.
func cancelledParams(params json.RawMessage) json.RawMessage {
	var fields map[string]json.RawMessage
	if _, err := segjson.Parse(params, &fields, segjson.DontMatchCaseInsensitiveStructFields); err != nil {
		return params
	}
	rid, ok := fields["requestId"]
	if !ok {
		return params
	}
	id, err := decodeID(rid)
	if err != nil {
		return params
	}
	if _, kept := rawID(id); !kept {
		return params
	}
	fields["requestId"] = encodeString(id.Raw().(string))
	out, err := json.Marshal(fields)
	if err != nil {
		return params
	}
	return out
}

// Over Streamable HTTP the go-sdk's handler decodes a POST body itself, and
// writes the answers: SDKBody gives it the body with every id that its
// jsonrpc.ID would change in the string form decodeID gives it, and
// RestoreIDs writes the id of each answer back as it came.

// SDKBody is data, a POST body that DecodeBody decoded into body, as the
// SDK must read it: data itself when every id is one the SDK holds exactly
// (almost always), else the messages encoded again, with each id kept as
// text in its string form and a notifications/cancelled naming its request
// by that form.
func SDKBody(data []byte, body *Body) ([]byte, error) {
	again := false
	for _, msg := range body.Messages {
		if _, kept := rawID(messageID(msg)); kept {
			again = true
		}
		if req, ok := msg.(*jsonrpc.Request); ok && req.Method == methodCancelled {
			again = true
		}
	}
	if !again {
		return data, nil
	}
	var out []byte
	if body.Batch {
		out = append(out, '[')
	}
	for i, msg := range body.Messages {
		enc, err := jsonrpc.EncodeMessage(msg)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, enc...)
	}
	if body.Batch {
		out = append(out, ']')
	}
	return out, nil
}

// rawIDStart is how the SDK's encoder starts a message whose id is kept as
// text: its fields come in this order.
var rawIDStart = []byte(`{"jsonrpc":"2.0","id":"\u0000mcpc-raw-id:`)

// RestoreIDs rewrites, in part of an answer the SDK wrote (a JSON body, or
// whole SSE events), the id of each message that starts a line or an SSE
// data field and holds an id kept as text, back to that text. Anything
// else is returned as it is, without a copy.
func RestoreIDs(b []byte) []byte {
	if !bytes.Contains(b, rawIDStart[len(`{"jsonrpc":"2.0","id":`):]) {
		return b
	}
	var out []byte
	last := 0
	for i := 0; i < len(b); {
		j := bytes.Index(b[i:], rawIDStart)
		if j < 0 {
			break
		}
		j += i
		next := j + len(rawIDStart)
		if !(j == 0 || b[j-1] == '\n' || bytes.HasSuffix(b[:j], []byte("data: ")) || bytes.HasSuffix(b[:j], []byte("data:"))) {
			i = next
			continue
		}
		start := j + len(`{"jsonrpc":"2.0","id":`)
		end, ok := stringEnd(b, start)
		if !ok {
			i = next
			continue
		}
		var s string
		if json.Unmarshal(b[start:end], &s) != nil {
			i = next
			continue
		}
		raw, _ := strings.CutPrefix(s, rawIDPrefix)
		out = append(out, b[last:start]...)
		out = append(out, raw...)
		last, i = end, end
	}
	if out == nil {
		return b
	}
	return append(out, b[last:]...)
}

// stringEnd returns the offset just after the JSON string that starts at
// b[start] (a quote).
func stringEnd(b []byte, start int) (int, bool) {
	for i := start + 1; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1, true
		case '\n':
			return 0, false
		}
	}
	return 0, false
}
