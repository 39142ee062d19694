package transport

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/mcpc-dev/mcpc/internal/testservers"
)

// wireSeeds are messages of every kind, and near misses of each.
var wireSeeds = []string{
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`,
	`{"jsonrpc":"2.0","id":"a-1","method":"tools/list"}`,
	`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
	`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3,"reason":"timeout"}}`,
	`{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"ok"}]}}`,
	`{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"unknown tool","data":{"x":1}}}`,
	`{"jsonrpc":"2.0","id":7,"error":null,"result":{}}`,
	`{"jsonrpc":"2.0","id":null,"method":""}`,
	`{"jsonrpc":"2.0","id":1.5,"result":1}`,
	`{"jsonrpc":"2.0","id":1e300,"result":1}`,
	`{"jsonrpc":"2.0","id":true,"result":1}`,
	`{"jsonrpc":"2.0","id":{},"result":1}`,
	`{"jsonrpc":"2.0","result":1}`,
	`{"jsonrpc":"1.0","id":1,"result":1}`,
	`{"jsonrpc":2,"id":1,"result":1}`,
	`{"JSONRPC":"2.0","id":1,"result":1}`,
	`{"jsonrpc":"2.0","id":1,"Method":"x"}`,
	`{"jsonrpc":"2.0","id":1,"method":5}`,
	`{"jsonrpc":"2.0","id":1,"method":null}`,
	`{"jsonrpc":"2.0","id":1,"method":"x","params":null}`,
	`{"jsonrpc":"2.0","id":1,"error":{"Code":1,"message":"m"}}`,
	`{"jsonrpc":"2.0","id":1,"error":{"code":"1"}}`,
	`{"jsonrpc":"2.0","id":1,"error":[]}`,
	`{"jsonrpc":"2.0","id":1,"result":1,"extra":[1,2]}`,
	`{"jsonrpc":"2.0","id":1,"id":2,"result":1}`,
	` {"jsonrpc":"2.0","id":1,"result":1} `,
	`null`, `[]`, `"x"`, `{}`, `{"jsonrpc":"2.0"`, `not json`, ``,
	`{"jsonrpc":"2.0","id":1,"method":"x","params":` + strings.Repeat("[", 999) + strings.Repeat("]", 999) + `}`,
	`{"jsonrpc":"2.0","id":1,"method":"x","params":` + strings.Repeat("[", 1000) + strings.Repeat("]", 1000) + `}`,
	`{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":"[[[[\\\"[["}}`,
}

// Nesting beyond the SDK's limit is refused before parsing: a few MB of
// brackets used to overflow the decoder's stack, which no recover catches.
func TestDecodeMessageDepth(t *testing.T) {
	deep := `{"jsonrpc":"2.0","id":1,"method":"x","params":` + strings.Repeat("[", 3_000_000) + strings.Repeat("]", 3_000_000) + `}`
	if _, err := DecodeMessage([]byte(deep)); err == nil || !strings.Contains(err.Error(), "exceeded maximum nesting depth of 1000") {
		t.Errorf("3 000 000 levels: %v", err)
	}
	if _, err := jsonrpc.DecodeMessage([]byte(deep)); err == nil {
		t.Error("the SDK accepts 3 000 000 levels: the limit here no longer matches it")
	}
}

// Both decoders accept the same messages and decode them alike.
func TestDecodeMessageMatchesSDK(t *testing.T) {
	for _, s := range wireSeeds {
		if msg := compareDecoders([]byte(s)); msg != "" {
			t.Errorf("%s: %s", s, msg)
		}
	}
}

func FuzzDecodeMessage(f *testing.F) {
	for _, s := range wireSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if msg := compareDecoders(data); msg != "" {
			t.Errorf("%q: %s", data, msg)
		}
	})
}

// compareDecoders returns how DecodeMessage and jsonrpc.DecodeMessage differ
// on data, or "".
func compareDecoders(data []byte) string {
	want, wantErr := jsonrpc.DecodeMessage(data)
	got, gotErr := DecodeMessage(data)
	if wantErr == nil && gotErr != nil && strings.Contains(gotErr.Error(), "after top-level value") {
		// The SDK's decoder stops after the first value and ignores the
		// rest; its transports then reject a line with more in it, as
		// DecodeMessage does at once.
		return ""
	}
	if wantErr != nil && gotErr == nil {
		if raw, ok := rawID(messageID(got)); ok {
			var f float64
			if json.Unmarshal([]byte(raw), &f) != nil {
				// A number beyond float64 (1e400): the SDK refuses the
				// message; DecodeMessage keeps the id as it came.
				return ""
			}
		}
	}
	if (wantErr == nil) != (gotErr == nil) {
		return fmt.Sprintf("SDK error %v, DecodeMessage error %v", wantErr, gotErr)
	}
	if wantErr != nil {
		return ""
	}
	if raw, ok := rawID(messageID(got)); ok {
		// An id kept as it came is the SDK's id once decoded as the SDK
		// decodes it.
		var v any
		if err := json.Unmarshal([]byte(raw), &v); err != nil {
			return fmt.Sprintf("an id kept as %q, which is not JSON: %v", raw, err)
		}
		id, err := jsonrpc.MakeID(v)
		if err != nil {
			return fmt.Sprintf("an id kept as %q: %v", raw, err)
		}
		if id != messageID(want) {
			return fmt.Sprintf("an id kept as %q, which the SDK decodes as %#v", raw, messageID(want).Raw())
		}
		setMessageID(got, id)
	}
	if req, ok := got.(*jsonrpc.Request); ok && req.Method == methodCancelled {
		// Its requestId in the form of the request's id (cancelledParams).
		if sdk := want.(*jsonrpc.Request).Params; bytes.Equal(cancelledParams(sdk), req.Params) {
			req.Params = sdk
		}
	}
	if a, b := describeMessage(want), describeMessage(got); a != b {
		return fmt.Sprintf("SDK %s\ndecodeWire %s", a, b)
	}
	return ""
}

func describeMessage(m jsonrpc.Message) string {
	compact := func(raw []byte) string {
		if raw == nil {
			return "<nil>"
		}
		var b bytes.Buffer
		if err := jsonCompact(&b, raw); err != nil {
			return "invalid " + string(raw)
		}
		return b.String()
	}
	switch m := m.(type) {
	case *jsonrpc.Request:
		return fmt.Sprintf("request id=%#v method=%q params=%s", m.ID.Raw(), m.Method, compact(m.Params))
	case *jsonrpc.Response:
		e := "<nil>"
		if m.Error != nil {
			we, ok := m.Error.(*jsonrpc.Error)
			if !ok {
				return "response with error of type " + reflect.TypeOf(m.Error).String()
			}
			e = fmt.Sprintf("code=%d message=%q data=%s", we.Code, we.Message, compact(we.Data))
		}
		return fmt.Sprintf("response id=%#v result=%s error=%s", m.ID.Raw(), compact(m.Result), e)
	}
	return fmt.Sprintf("%T", m)
}

// setMessageID sets the id of a request or response.
func setMessageID(msg jsonrpc.Message, id jsonrpc.ID) {
	switch m := msg.(type) {
	case *jsonrpc.Request:
		m.ID = id
	case *jsonrpc.Response:
		m.ID = id
	}
}

func jsonCompact(dst *bytes.Buffer, raw []byte) error { return json.Compact(dst, raw) }

// No decoding error quotes a value of the message: a server that echoes a
// secret in the wrong place must not get a part of it shown, which
// redaction of the whole secret would miss.
func TestDecodeMessageErrorsQuoteNothing(t *testing.T) {
	secret := "CANARY-wire-" + strings.Repeat("Zq9x", 20)
	for _, m := range []string{
		`{"jsonrpc":%q,"id":1,"result":{}}`,
		`{"jsonrpc":{"v":%q},"id":1,"result":{}}`,
		`{"jsonrpc":"2.0","id":1,"method":{"m":%q}}`,
		`{"jsonrpc":"2.0","id":1,"method":[%q]}`,
		`{"jsonrpc":"2.0","id":{"i":%q},"result":{}}`,
		`{"jsonrpc":"2.0","id":1,"error":{"code":%q,"message":"m"}}`,
		`{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":{"x":%q}}}`,
		`{"jsonrpc":"2.0","id":1,"error":%q}`,
		`{"jsonrpc":"2.0","id":1,"params":7,"result":{}} %q`,
		`[%q]`,
		`%q`,
		`{"jsonrpc":"2.0","id":1,"result":{"a":%q,}}`,
		`{"jsonrpc":"2.0","id":1,"result":%q`,
	} {
		line := fmt.Sprintf(m, secret)
		_, err := DecodeMessage([]byte(line))
		if err == nil {
			t.Errorf("%s: decoded", line)
			continue
		}
		if testservers.LeaksPart(err.Error(), secret) || strings.Contains(err.Error(), "CANARY") {
			t.Errorf("%s: the error quotes the secret: %v", line, err)
		}
	}
}

// An id goes back exactly as it came, and notifications/cancelled names a
// request by the id its request was decoded to (the SDK decodes requestId
// as a float64 itself: 1.5 would cancel request 1).
func TestIDsRoundTrip(t *testing.T) {
	for _, id := range []string{`1`, `-7`, `"a"`, `1.5`, `1e3`, `18446744073709551616`, `-0`, `"a\u00e9"`, `"\u0000mcpc-raw-id:1"`, `9007199254740993`, `"<&>"`} {
		line := `{"jsonrpc":"2.0","id":` + id + `,"method":"ping"}`
		msg, err := DecodeMessage([]byte(line))
		if err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		req := msg.(*jsonrpc.Request)
		data, err := EncodeMessage(&jsonrpc.Response{ID: req.ID, Result: json.RawMessage(`{}`)})
		if want := `{"jsonrpc":"2.0","id":` + id + `,"result":{}}`; err != nil || string(data) != want {
			t.Errorf("the answer to id %s: %s %v, want %s", id, data, err, want)
		}
		if again, _ := EncodeMessage(req); string(again) != line {
			t.Errorf("the request of id %s encoded again: %s", id, again)
		}
		cancel, err := DecodeMessage([]byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` + id + `,"reason":"r"}}`))
		if err != nil {
			t.Fatal(err)
		}
		var p struct {
			RequestID any `json:"requestId"`
		}
		if err := json.Unmarshal(cancel.(*jsonrpc.Request).Params, &p); err != nil {
			t.Fatal(err)
		}
		if got, err := jsonrpc.MakeID(p.RequestID); err != nil || got != req.ID {
			t.Errorf("notifications/cancelled of id %s names %#v, the request is %#v", id, got.Raw(), req.ID.Raw())
		}
	}
}

// DecodeBody decodes what DecodeMessage decodes, one message or a batch,
// and never panics.
func FuzzDecodeBody(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`,
		` [{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"}]`,
		`[]`, `[`, `{"jsonrpc":"2.0","id":1,"result":{}}`, "\n", `[[[[`, `{"jsonrpc":"2.0","id":null,"method":"x"}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		body, err := DecodeBody(data)
		if err != nil {
			return
		}
		if len(body.Messages) == 0 {
			t.Fatalf("%q: no message and no error", data)
		}
		if !body.Batch {
			msg, err := DecodeMessage(bytes.TrimSpace(data))
			if err != nil {
				t.Fatalf("%q: DecodeBody took what DecodeMessage refuses: %v", data, err)
			}
			a, _ := jsonrpc.EncodeMessage(msg)
			b, _ := jsonrpc.EncodeMessage(body.Messages[0])
			if !bytes.Equal(a, b) {
				t.Fatalf("%q: %s, DecodeMessage %s", data, b, a)
			}
		}
		for _, msg := range body.Messages {
			if _, err := jsonrpc.EncodeMessage(msg); err != nil {
				t.Fatalf("%q: a decoded message does not encode: %v", data, err)
			}
		}
	})
}

// A body whose ids the SDK holds exactly goes to it as it came; one with
// an id it would change goes in the string form, which the SDK decodes and
// encodes back unchanged, and RestoreIDs turns the SDK's answer back into
// the id as sent, in a JSON body and in SSE events.
func TestSDKBodyAndRestoreIDs(t *testing.T) {
	plain := []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	body, err := DecodeBody(plain)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := SDKBody(plain, body); &got[0] != &plain[0] {
		t.Errorf("a plain body was encoded again: %s", got)
	}
	for _, id := range []string{`1.5`, `18446744073709551616`, `"a\u00e9"`, `"\u0000mcpc-raw-id:1"`, `-0`} {
		for _, data := range []string{
			`{"jsonrpc":"2.0","id":` + id + `,"method":"ping"}`,
			`[{"jsonrpc":"2.0","id":` + id + `,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` + id + `}}]`,
		} {
			body, err := DecodeBody([]byte(data))
			if err != nil {
				t.Fatal(err)
			}
			sdk, err := SDKBody([]byte(data), body)
			if err != nil {
				t.Fatal(err)
			}
			// What the SDK reads and answers.
			var raws []json.RawMessage
			if body.Batch {
				if err := json.Unmarshal(sdk, &raws); err != nil {
					t.Fatalf("%s: %s", data, sdk)
				}
			} else {
				raws = []json.RawMessage{sdk}
			}
			msg, err := jsonrpc.DecodeMessage(raws[0])
			if err != nil {
				t.Fatalf("%s: the SDK cannot read %s: %v", data, sdk, err)
			}
			req := msg.(*jsonrpc.Request)
			if body.Batch {
				cancel, _ := jsonrpc.DecodeMessage(raws[1])
				var p struct{ RequestID any }
				_ = json.Unmarshal(cancel.(*jsonrpc.Request).Params, &p)
				if p.RequestID != req.ID.Raw() {
					t.Errorf("%s: the cancellation names %v, the request is %v", data, p.RequestID, req.ID.Raw())
				}
			}
			answer, _ := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: req.ID, Result: json.RawMessage(`{}`)})
			want := `{"jsonrpc":"2.0","id":` + id + `,"result":{}}`
			if got := string(RestoreIDs(answer)); got != want {
				t.Errorf("JSON answer: %s, want %s", got, want)
			}
			sse := "event: message\nid: s_1\ndata: " + string(answer) + "\n\nevent: message\ndata: " + string(answer) + "\n\n"
			wantSSE := "event: message\nid: s_1\ndata: " + want + "\n\nevent: message\ndata: " + want + "\n\n"
			if got := string(RestoreIDs([]byte(sse))); got != wantSSE {
				t.Errorf("SSE answer:\n%s\nwant\n%s", got, wantSSE)
			}
		}
	}
	// The form inside a value, not as a message's id, stays.
	inner := []byte(`{"jsonrpc":"2.0","id":2,"result":{"text":"{\"jsonrpc\":\"2.0\",\"id\":\"\\u0000mcpc-raw-id:1\"}"}}`)
	if got := RestoreIDs(inner); !bytes.Equal(got, inner) {
		t.Errorf("a value was rewritten: %s", got)
	}
}
