package plan

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"testing"
)

// serverJSON is a server as encoding/json writes it in a canonical plan.
func serverJSON(t *testing.T, s *Server) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("    ", "  ")
	if err := enc.Encode(s); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// The server writer writes every server byte for byte as encoding/json
// does: strings of every kind (quotes, backslashes, control characters,
// invalid UTF-8, U+2028, <>&, non-ASCII), nil and empty lists and maps,
// null and set env values, the omitted fields set and unset, any integer.
func TestServerWriterWritesAsEncodingJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 4))
	pieces := []string{"", "a", "npx", "${workspace}", `"`, `\`, "\n", "\t", "\x00", "\x1f", "\x7f", "\xff", "\xe2\x80", "\u2028", "\u2029", "<", ">", "&", "é", "日本", "😀", " ", "/", "\ufffd"}
	str := func() string {
		var b []byte
		for range r.IntN(4) {
			b = append(b, pieces[r.IntN(len(pieces))]...)
		}
		return string(b)
	}
	ptr := func() *string {
		if r.IntN(3) == 0 {
			return nil
		}
		s := str()
		return &s
	}
	num := func() int { return []int{0, 1, -1, 120, 1 << 40, -(1 << 62)}[r.IntN(6)] }
	w := newServerWriter()
	for i := range 3000 {
		s := Server{ActionSet: str(), CallTimeoutSeconds: num(), CannotStart: str(), Command: str(), Cwd: str(), Description: str(),
			Enabled: r.IntN(2) == 0, IdleTimeoutSeconds: num(), Name: str(),
			Origin:   Origin{Column: num(), Key: str(), Line: num(), Path: str(), Source: str()},
			Parallel: r.IntN(2) == 0, PromptSection: ptr(), StartupTimeoutSeconds: num(), StderrLevel: str(),
			ToolPrefix: str(), Transport: str(), URL: str()}
		switch r.IntN(3) {
		case 1:
			s.Args = []string{}
		case 2:
			for range 1 + r.IntN(3) {
				s.Args = append(s.Args, str())
			}
		}
		switch r.IntN(3) {
		case 1:
			s.Env = map[string]*string{}
		case 2:
			s.Env = map[string]*string{}
			for range 1 + r.IntN(4) {
				s.Env[str()] = ptr()
			}
		}
		got, err := w.server(&s)
		if err != nil {
			t.Fatal(err)
		}
		if want := serverJSON(t, &s); !bytes.Equal(got, want) {
			t.Fatalf("server %d:\n%s\nencoding/json:\n%s", i, got, want)
		}
	}
}

// The server writer knows every field of Server: each one set (by
// reflection, so that a field added to Server is set too) is written as
// encoding/json writes it.
func TestServerWriterKnowsEveryField(t *testing.T) {
	var s Server
	var fill func(v reflect.Value)
	fill = func(v reflect.Value) {
		switch v.Kind() {
		case reflect.String:
			v.SetString("x " + v.Type().Name())
		case reflect.Int, reflect.Int64, reflect.Int32:
			v.SetInt(7)
		case reflect.Bool:
			v.SetBool(true)
		case reflect.Slice:
			v.Set(reflect.MakeSlice(v.Type(), 1, 1))
			fill(v.Index(0))
		case reflect.Map:
			m := reflect.MakeMap(v.Type())
			k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
			fill(k)
			fill(e)
			m.SetMapIndex(k, e)
			v.Set(m)
		case reflect.Pointer:
			v.Set(reflect.New(v.Type().Elem()))
			fill(v.Elem())
		case reflect.Struct:
			for i := range v.NumField() {
				fill(v.Field(i))
			}
		default:
			t.Fatalf("a field of kind %s: teach this test and the server writer", v.Kind())
		}
	}
	fill(reflect.ValueOf(&s).Elem())
	got, err := newServerWriter().server(&s)
	if err != nil {
		t.Fatal(err)
	}
	if want := serverJSON(t, &s); !bytes.Equal(got, want) {
		t.Errorf("the server writer does not write every field of Server:\n%s\nencoding/json:\n%s", got, want)
	}
}
