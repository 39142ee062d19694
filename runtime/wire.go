package runtime

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	segjson "github.com/segmentio/encoding/json"
)

// decodeWire decodes one JSON-RPC 2.0 message exactly as
// jsonrpc.DecodeMessage does, with the same JSON decoder and the same flags:
// keys match exactly ("Method" is not "method"), "jsonrpc" must be "2.0",
// a message with a "method" key is a request (a notification without an
// id), any other message is a response and needs an id. Unlike the SDK it
// refuses anything after the message, which the SDK's transports refuse
// too.
//
// Why not jsonrpc.DecodeMessage: it parses through a json.Decoder, which
// allocates a fresh 32 KiB buffer for every value, and it parses a request
// twice (the message, then its method), so each message costs 64 KiB of
// garbage. A gateway decodes two messages per proxied call, and
// BenchmarkRunStdioAddedLatency showed that allocation, and the collections
// it causes, as the largest part of the latency mcpc run adds. json.Parse
// of the same library needs no buffer. FuzzDecodeWire checks that both
// decoders agree.
func decodeWire(data []byte) (jsonrpc.Message, error) {
	// The SDK's limit, checked first: json.Parse recurses per level, and a
	// line of a few MB of brackets would overflow the stack, which ends the
	// process.
	if nestedDeeper(data, maxWireDepth) {
		return nil, fmt.Errorf("unmarshaling jsonrpc message: json: exceeded maximum nesting depth of %d", maxWireDepth)
	}
	var msg wireDecode
	rest, err := segjson.Parse(data, &msg, segjson.DontMatchCaseInsensitiveStructFields)
	if err == nil && len(bytes.TrimSpace(rest)) > 0 {
		err = fmt.Errorf("invalid character %q after top-level value", rest[0])
	}
	if err != nil {
		var syntax *segjson.SyntaxError
		if errors.As(err, &syntax) {
			// As the standard library words it: "invalid character 'h'
			// in literal true (expecting 'r')", without the rest of the
			// line that the library's own message quotes.
			var raw json.RawMessage
			if serr := json.Unmarshal(data, &raw); serr != nil {
				return nil, serr
			}
		}
		return nil, fmt.Errorf("unmarshaling jsonrpc message: %w", err)
	}
	if msg.VersionTag != "2.0" {
		return nil, fmt.Errorf("invalid message version tag %q; expected %q", msg.VersionTag, "2.0")
	}
	id, err := jsonrpc.MakeID(msg.ID)
	if err != nil {
		return nil, errors.New("the id is neither a string nor a number")
	}
	if len(msg.Method) > 0 {
		// The "method" key was present; its value may be "" or null.
		var method string
		if _, err := segjson.Parse(msg.Method, &method, segjson.DontMatchCaseInsensitiveStructFields); err != nil {
			return nil, fmt.Errorf("unmarshaling jsonrpc message: %w", err)
		}
		return &jsonrpc.Request{ID: id, Method: method, Params: msg.Params}, nil
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

// maxWireDepth is the deepest nesting of objects and arrays a message may
// have, the SDK's limit.
const maxWireDepth = 1000

// nestedDeeper reports whether the JSON text data nests objects and arrays
// deeper than max, skipping the contents of strings.
func nestedDeeper(data []byte, max int) bool {
	depth := 0
	for i := 0; i < len(data); i++ {
		switch data[i] {
		case '"':
			for i++; i < len(data) && data[i] != '"'; i++ {
				if data[i] == '\\' {
					i++
				}
			}
		case '{', '[':
			if depth++; depth > max {
				return true
			}
		case '}', ']':
			depth--
		}
	}
	return false
}

// wireDecode is the SDK's decoding form of a JSON-RPC message. Method is
// raw, to tell an absent key from an empty value.
type wireDecode struct {
	VersionTag string          `json:"jsonrpc"`
	ID         any             `json:"id,omitempty"`
	Method     json.RawMessage `json:"method"`
	Params     json.RawMessage `json:"params,omitempty"`
	Result     json.RawMessage `json:"result,omitempty"`
	Error      *jsonrpc.Error  `json:"error,omitempty"`
}

// errNoID is the error of a message that is neither a request nor a
// response.
var errNoID = errors.New("the message has neither a method nor an id")

// decodeWireBatch decodes a JSON array of JSON-RPC messages.
func decodeWireBatch(line []byte) ([]jsonrpc.Message, error) {
	var raws []json.RawMessage
	if err := json.Unmarshal(line, &raws); err != nil {
		return nil, err
	}
	if len(raws) == 0 {
		return nil, errors.New("an empty JSON-RPC batch")
	}
	msgs := make([]jsonrpc.Message, len(raws))
	for i, raw := range raws {
		m, err := decodeWire(raw)
		if err != nil {
			return nil, err
		}
		msgs[i] = m
	}
	return msgs, nil
}
