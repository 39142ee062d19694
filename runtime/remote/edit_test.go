package remote

import (
	"strings"
	"testing"
)

func entryLine(name string) string {
	return `{"name": "` + name + `", "url": "https://` + name + `.example/mcp", "transport": "auto", "tools": null, "auth": "headers", "sealed": "` + validSealed + `"}`
}

func srv(name string) Server {
	return Server{Name: name, URL: "https://" + name + ".example/mcp", Transport: "auto", Auth: "headers"}
}

func mustParse(t *testing.T, data []byte) *File {
	t.Helper()
	f := Parse("s.json", data)
	if f.Problem != "" {
		t.Fatalf("%s\n%s", f.Problem, data)
	}
	return f
}

func names(f *File) string { return strings.Join(f.Names(), ",") }

// Edits change only the entries they are about: every other entry keeps its
// bytes, and so does everything around the list (comments are not JSON, but
// odd spacing and key order are kept).
func TestEditsKeepOtherEntriesByteForByte(t *testing.T) {
	// Hand-formatted: a multi-line entry, odd spacing, an unknown field.
	a := "{ \"name\":\"a\",\n      \"url\": \"https://a.example/mcp\", \"transport\": \"auto\",\n      \"tools\": [\"x\"], \"auth\": \"headers\", \"sealed\": \"" + validSealed + "\", \"note\": \"kept\" }"
	b := entryLine("b")
	c := entryLine("c")
	orig := "{\n\t\"servers\" : [\n      " + a + " ,\n      " + b + ",\n      " + c + "\n\t],\n\t\"version\": 1,  \"x-owner\": \"ops\"\n}"
	f := mustParse(t, []byte(orig))
	if len(f.Entries) != 3 {
		t.Fatalf("%d entries", len(f.Entries))
	}
	keeps := func(t *testing.T, out []byte, want string, kept ...string) {
		t.Helper()
		g := mustParse(t, out)
		if names(g) != want {
			t.Errorf("names %q, want %q\n%s", names(g), want, out)
		}
		for _, k := range kept {
			if !strings.Contains(string(out), k) {
				t.Errorf("entry not kept byte for byte: %s\n%s", k, out)
			}
		}
		if !strings.HasPrefix(string(out), "{\n\t\"servers\" : [\n      ") || !strings.HasSuffix(string(out), "\n\t],\n\t\"version\": 1,  \"x-owner\": \"ops\"\n}") {
			t.Errorf("the text around the list changed:\n%s", out)
		}
	}
	t.Run("replace middle", func(t *testing.T) {
		s := srv("b")
		s.Tools = []string{"q"}
		out, err := f.WithEntry(s, validSealed)
		if err != nil {
			t.Fatal(err)
		}
		keeps(t, out, "a,b,c", a, c)
		if want := orig[:strings.Index(orig, b)] + string(RenderEntry(s, validSealed)) + orig[strings.Index(orig, b)+len(b):]; string(out) != want {
			t.Errorf("got\n%s\nwant\n%s", out, want)
		}
	})
	t.Run("append", func(t *testing.T) {
		out, err := f.WithEntry(srv("d"), validSealed)
		if err != nil {
			t.Fatal(err)
		}
		keeps(t, out, "a,b,c,d", a, b, c)
		if !strings.Contains(string(out), c+",\n      "+string(RenderEntry(srv("d"), validSealed))+"\n\t]") {
			t.Errorf("appended with another separator:\n%s", out)
		}
	})
	for _, rm := range []struct{ name, want string }{{"a", "b,c"}, {"b", "a,c"}, {"c", "a,b"}} {
		t.Run("remove "+rm.name, func(t *testing.T) {
			out, n, err := f.Without(rm.name)
			if err != nil || n != 1 {
				t.Fatalf("%v %d", err, n)
			}
			var kept []string
			for name, text := range map[string]string{"a": a, "b": b, "c": c} {
				if name != rm.name {
					kept = append(kept, text)
				}
			}
			keeps(t, out, rm.want, kept...)
		})
	}
	t.Run("remove all", func(t *testing.T) {
		out, _, _ := f.Without("a")
		g := mustParse(t, out)
		out, _, _ = g.Without("b")
		g = mustParse(t, out)
		out, _, _ = g.Without("c")
		g = mustParse(t, out)
		if len(g.Entries) != 0 || !strings.Contains(string(out), "\"servers\" : []") {
			t.Errorf("%s", out)
		}
		// And add to the empty list again.
		out, err := g.WithEntry(srv("z"), validSealed)
		if err != nil {
			t.Fatal(err)
		}
		g = mustParse(t, out)
		if names(g) != "z" || !strings.Contains(string(out), "[\n\t  {\"name\": \"z\"") {
			t.Errorf("%s", out)
		}
	})
	t.Run("remove missing", func(t *testing.T) {
		_, n, err := f.Without("nope")
		if err != nil || n != 0 {
			t.Errorf("%v %d", err, n)
		}
	})
}

func TestEditsOnANewFileAndDuplicates(t *testing.T) {
	f := &File{Path: "s.json"}
	out, err := f.WithEntry(srv("a"), validSealed)
	if err != nil {
		t.Fatal(err)
	}
	want := "{\n  \"version\": 1,\n  \"servers\": [\n    " + entryLine("a") + "\n  ]\n}\n"
	if string(out) != want {
		t.Errorf("new file\n%s\nwant\n%s", out, want)
	}
	// A name given twice (by hand): add replaces the first and drops the
	// other; remove drops both.
	dup := mustParse(t, []byte(entryJSON(entryLine("a")+", "+entryLine("b")+", "+entryLine("a"))))
	out, err = dup.WithEntry(Server{Name: "a", URL: "https://new.example/", Transport: "sse", Auth: "headers"}, validSealed)
	if err != nil {
		t.Fatal(err)
	}
	g := mustParse(t, out)
	if names(g) != "a,b" || g.Entries[0].URL != "https://new.example/" || len(g.Diagnostics) != 0 {
		t.Errorf("%s %v", out, g.Diagnostics)
	}
	out, n, _ := dup.Without("a")
	if n != 2 || names(mustParse(t, out)) != "b" {
		t.Errorf("%d %s", n, out)
	}
}

// A file that is unusable as a whole is never edited; an invalid entry is
// kept as it is by edits of other entries.
func TestEditsRefuseABrokenFile(t *testing.T) {
	for _, src := range []string{`{"version": 2, "servers": []}`, `{"version": 1, "servers": [`, `[]`, `{"version": 1}`} {
		f := Parse("s.json", []byte(src))
		if _, err := f.WithEntry(srv("a"), validSealed); err == nil {
			t.Errorf("%s: add accepted", src)
		}
		if _, _, err := f.Without("a"); err == nil {
			t.Errorf("%s: remove accepted", src)
		}
	}
	bad := `{"name": "Bad Name", "url": 3}`
	f := Parse("s.json", []byte(entryJSON(bad+", "+entryLine("b"))))
	if f.Problem != "" || f.Entries[0].Valid() {
		t.Fatalf("%q %v", f.Problem, f.Entries[0])
	}
	out, err := f.WithEntry(srv("c"), validSealed)
	if err != nil || !strings.Contains(string(out), bad) {
		t.Errorf("%v %s", err, out)
	}
}
