package ui

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// After an accepted edit the notice carries the notes Options.EditNotes
// gives for the edited file (a host version that applies edits only at its
// next restart); an edit that changes nothing does not. The notes are made
// by the page, never read from the query, which anyone can write.
func TestEditNotice(t *testing.T) {
	const note = "restart the host for this change to take effect"
	var asked []string
	p, file := craftbotUIWith(t, Options{EditNotes: func(f string) []string {
		asked = append(asked, f)
		return []string{note}
	}})
	code, hdr, body := p.post("/edit", url.Values{"op": {"disable"}, "name": {"filesystem"}})
	if code != http.StatusSeeOther {
		t.Fatalf("disable: %d\n%s", code, body)
	}
	if strings.Contains(hdr.Get("Location"), "restart") {
		t.Errorf("the note is in the redirect's query: %s", hdr.Get("Location"))
	}
	code, _, body = p.get(hdr.Get("Location"))
	if code != http.StatusOK || !strings.Contains(body, "disabled server filesystem. "+takesEffect+". "+note) {
		t.Errorf("after the edit: %d\n%s", code, body)
	}
	if len(asked) == 0 || asked[len(asked)-1] != file {
		t.Errorf("EditNotes was asked for %v, want %s", asked, file)
	}
	code, hdr, _ = p.post("/edit", url.Values{"op": {"disable"}, "name": {"filesystem"}})
	if _, _, body = p.get(hdr.Get("Location")); code != http.StatusSeeOther || strings.Contains(body, note) {
		t.Errorf("an edit that changes nothing shows the note:\n%s", body)
	}
	if _, _, body = p.get("/?done=enable&name=x&note=FORGED"); strings.Contains(body, "FORGED") {
		t.Errorf("the page shows a note from the query:\n%s", body)
	}
}
