package transport

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	segjson "github.com/segmentio/encoding/json"

	"github.com/mcpc-dev/mcpc/internal/node"
)

// DecodeMessage decodes one JSON-RPC 2.0 message exactly as
// jsonrpc.DecodeMessage does, with the same JSON decoder and the same flags:
// keys match exactly ("Method" is not "method"), "jsonrpc" must be "2.0",
// a message with a "method" key is a request (a notification without an
// id), any other message is a response and needs an id. Unlike the SDK it
// refuses anything after the message, which the SDK's transports refuse
// too.
//
// Why not jsonrpc.DecodeMessage: it parses through a json.Decoder, which
// allocates a fresh buffer for every value, and it parses a request twice
// (the message, then its method), so each message leaves garbage in
// proportion. A gateway decodes two messages per proxied call, and
// BenchmarkRunStdioAddedLatency showed that allocation, and the collections
// it causes, as the largest part of the latency mcpc run adds. json.Parse
// of the same library needs no buffer. FuzzDecodeMessage checks that both
// decoders agree.
func DecodeMessage(data []byte) (jsonrpc.Message, error) {
	// The SDK's limit, checked first: json.Parse recurses per level, and a
	// line of a few MB of brackets would overflow the stack, which ends the
	// process.
	if _, deep := node.DeeperThan(data, false, maxWireDepth); deep {
		return nil, fmt.Errorf("unmarshaling jsonrpc message: json: exceeded maximum nesting depth of %d", maxWireDepth)
	}
	var msg wireDecode
	rest, err := segjson.Parse(data, &msg, segjson.DontMatchCaseInsensitiveStructFields)
	if err != nil || len(bytes.TrimSpace(rest)) > 0 {
		return nil, wireError(data)
	}
	if msg.VersionTag != "2.0" {
		tag := fmt.Sprintf("%q", msg.VersionTag)
		if len(msg.VersionTag) > 8 {
			tag = fmt.Sprintf("(%d bytes)", len(msg.VersionTag))
		}
		return nil, fmt.Errorf("invalid message version tag %s; expected %q", tag, "2.0")
	}
	id, err := decodeID(msg.ID)
	if err != nil {
		return nil, err
	}
	if len(msg.Method) > 0 {
		// The "method" key was present; its value may be "" or null.
		var method string
		if _, err := segjson.Parse(msg.Method, &method, segjson.DontMatchCaseInsensitiveStructFields); err != nil {
			return nil, fmt.Errorf("unmarshaling jsonrpc message: the method is %s, not a string", jsonKind(msg.Method))
		}
		params := msg.Params
		if method == methodCancelled {
			params = cancelledParams(params)
		}
		return &jsonrpc.Request{ID: id, Method: method, Params: params}, nil
	}
	if !id.IsValid() {
		return nil, errNoID
	}
	resp := &jsonrpc.Response{ID: id, Result: msg.Result}
	if msg.Error != nil {
		resp.Error = msg.Error
	}
	return resp, nil
}

// wireError describes why data, which json.Parse refused, is not a
// JSON-RPC message, without quoting it: the parser's own messages quote the
// first 32 bytes of the offending value, which may be the start of a
// secret (a server echoing its environment) that redaction, seeing only a
// part of it, cannot recognise. The standard library finds the same fault
// and names only its kind and place: "invalid character 'h' in literal
// true (expecting 'r')", "json: cannot unmarshal object into … error.code".
func wireError(data []byte) error {
	var std wireDecode
	err := json.Unmarshal(data, &std)
	var syntax *json.SyntaxError
	var mismatch *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syntax):
		return err
	case errors.As(err, &mismatch) && mismatch.Field == "":
		return fmt.Errorf("unmarshaling jsonrpc message: the message is %s, not an object", article(mismatch.Value))
	case errors.As(err, &mismatch):
		return fmt.Errorf("unmarshaling jsonrpc message: %s is %s, not %s", mismatch.Field, article(mismatch.Value), article(mismatch.Type.String()))
	}
	return errors.New("unmarshaling jsonrpc message: not a JSON-RPC 2.0 message")
}

// jsonKind names the kind of the JSON value raw: "an object", "a number"…
func jsonKind(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

// article puts "a" or "an" before a noun.
func article(noun string) string {
	if noun != "" && strings.ContainsRune("aeiou", rune(noun[0])) {
		return "an " + noun
	}
	return "a " + noun
}

// maxWireDepth is the deepest nesting of objects and arrays a message may
// have, the SDK's limit.
const maxWireDepth = 1000

// wireDecode is the SDK's decoding form of a JSON-RPC message. Method is
// raw, to tell an absent key from an empty value; ID is raw, to keep it
// exactly (decodeID).
type wireDecode struct {
	VersionTag string          `json:"jsonrpc"`
	ID         json.RawMessage `json:"id,omitempty"`
	Method     json.RawMessage `json:"method"`
	Params     json.RawMessage `json:"params,omitempty"`
	Result     json.RawMessage `json:"result,omitempty"`
	Error      *jsonrpc.Error  `json:"error,omitempty"`
}

// errNoID is the error of a message that is neither a request nor a
// response.
var errNoID = errors.New("the message has neither a method nor an id")

// decodeBatch decodes a JSON array of JSON-RPC messages.
func decodeBatch(line []byte) ([]jsonrpc.Message, error) {
	var raws []json.RawMessage
	if err := json.Unmarshal(line, &raws); err != nil {
		return nil, err
	}
	if len(raws) == 0 {
		return nil, errors.New("an empty JSON-RPC batch")
	}
	msgs := make([]jsonrpc.Message, len(raws))
	for i, raw := range raws {
		m, err := DecodeMessage(raw)
		if err != nil {
			return nil, err
		}
		msgs[i] = m
	}
	return msgs, nil
}

// Body is a decoded POST body of Streamable HTTP: one JSON-RPC message, or
// a batch.
type Body struct {
	Messages []jsonrpc.Message
	Batch    bool
}

// DecodeBody decodes a POST body once. Its error names the kind and place
// of the fault, never the body's content.
func DecodeBody(data []byte) (*Body, error) {
	i := 0
	for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\r' || data[i] == '\n') {
		i++
	}
	if i == len(data) {
		return nil, errors.New("the body is empty")
	}
	if data[i] == '[' {
		msgs, err := decodeBatch(data)
		if err != nil {
			return nil, err
		}
		return &Body{Messages: msgs, Batch: true}, nil
	}
	msg, err := DecodeMessage(data[i:])
	if err != nil {
		return nil, err
	}
	return &Body{Messages: []jsonrpc.Message{msg}}, nil
}

// DecodeParams decodes the params of a message that DecodeMessage decoded
// into v as the SDK decodes them (the same library and flags: keys match
// exactly), without the SDK's fresh 32 KiB decoder buffer per decode. The
// message's nesting was checked when it was decoded. Anything after the
// value is refused.
func DecodeParams(params []byte, v any) error {
	rest, err := segjson.Parse(params, v, segjson.DontMatchCaseInsensitiveStructFields)
	if err != nil {
		return err
	}
	if len(bytes.TrimSpace(rest)) > 0 {
		return errors.New("unmarshaling params: data after the value")
	}
	return nil
}
