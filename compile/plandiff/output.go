package plandiff

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/mcpc-dev/mcpc/compile/plan"
	"github.com/mcpc-dev/mcpc/internal/term"
)

// JSON is the diff as canonical JSON (keys sorted, two-space indent, a
// trailing newline): changed (Changed), moved, notCompared, plan, profile,
// servers (each with change, effect, fields, name, origin), uncompared
// and unchanged.
func (d *Diff) JSON() ([]byte, error) {
	return plan.CanonicalJSON(struct {
		*Diff
		Changed bool `json:"changed"`
	}{d, d.Changed()})
}

// WriteText writes the diff for a reader: one line per server that
// differs, sorted by name (+ added, - removed, ~ otherwise), each with how
// it differs, what a runtime would do and where the server is written,
// then its fields old → new with each one's effect; the plan's own fields;
// what could not be compared; a summary line.
func (d *Diff) WriteText(w io.Writer) error {
	var b strings.Builder
	if d.Empty() {
		fmt.Fprintf(&b, "no difference: %s plans alike (%s%s)\n", d.Profile, count(d.Unchanged, "server"), d.movedText())
		_, err := io.WriteString(w, b.String())
		return err
	}
	for _, s := range d.Servers {
		fmt.Fprintf(&b, "%s %s: %s, %s (%s)\n", marker(s.Change), term.Escape(s.Name), s.Change, s.Effect, term.Escape(s.Origin.String()))
		writeChanges(&b, s.Fields)
	}
	if len(d.Plan) > 0 {
		b.WriteString("plan:\n")
		writeChanges(&b, d.Plan)
	}
	for _, why := range d.NotCompared {
		fmt.Fprintf(&b, "not compared: %s\n", term.Escape(why))
	}
	b.WriteString(d.summary() + "\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// movedText is ", N moved" when servers alike were written elsewhere.
func (d *Diff) movedText() string {
	if d.Moved == 0 {
		return ""
	}
	return fmt.Sprintf(", %d moved", d.Moved)
}

func marker(k Kind) string {
	switch k {
	case Added:
		return "+"
	case Removed:
		return "-"
	}
	return "~"
}

func writeChanges(b *strings.Builder, cs []Change) {
	for _, c := range cs {
		effect := c.Effect.String()
		switch {
		case c.Via == ViaHost:
			effect += "; inherited from the host environment"
		case c.Via != "":
			effect += "; value of " + c.Via
		}
		fmt.Fprintf(b, "    %s: %s → %s (%s)\n", term.Escape(c.Field), term.Escape(textValue(c.Field, c.Old)), term.Escape(textValue(c.Field, c.New)), term.Escape(effect))
	}
}

// textValue shows a value of a change: compact JSON (so "" and strings
// with spaces stay visible), the plan's records as a list, [REDACTED]
// bare, and (unset) for a side that has no value.
func textValue(field string, v json.RawMessage) string {
	if v == nil {
		return "(unset)"
	}
	switch field {
	case "skipped":
		var l []plan.Skipped
		if json.Unmarshal(v, &l) == nil {
			return listText(l, func(x plan.Skipped) string { return x.Name + " (" + x.Rule + ", " + x.Origin.String() + ")" })
		}
	case "shadowed":
		var l []plan.Shadowed
		if json.Unmarshal(v, &l) == nil {
			return listText(l, func(x plan.Shadowed) string {
				return x.Name + " (" + x.Origin.String() + ", shadowed by " + x.Winner.String() + ")"
			})
		}
	case "sources":
		var l []plan.SourceRef
		if json.Unmarshal(v, &l) == nil {
			return listText(l, func(x plan.SourceRef) string { return strings.TrimSpace(x.Kind + " " + x.Path) })
		}
	}
	var s string
	if json.Unmarshal(v, &s) == nil && s == Redacted {
		return Redacted
	}
	return string(bytes.TrimSpace(v))
}

// summary counts the servers by how they differ and by effect, in a fixed
// order, leaving out zeros.
func (d *Diff) summary() string {
	kinds := map[Kind]int{}
	effects := map[Effect]int{}
	for _, s := range d.Servers {
		kinds[s.Change]++
		effects[s.Effect]++
	}
	var parts []string
	for _, k := range []Kind{Added, Removed, Enabled, Disabled, Changed} {
		if kinds[k] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", kinds[k], k))
		}
	}
	unchanged := fmt.Sprintf("%d unchanged", d.Unchanged)
	if d.Moved > 0 {
		unchanged += fmt.Sprintf(" (%d moved)", d.Moved)
	}
	parts = append(parts, unchanged)
	if d.Uncompared > 0 {
		parts = append(parts, fmt.Sprintf("%d not compared", d.Uncompared))
	}
	var acts []string
	for _, e := range []Effect{Connect, Disconnect, Restart, Reregister, Update, None} {
		if effects[e] > 0 {
			acts = append(acts, fmt.Sprintf("%s %d", e, effects[e]))
		}
	}
	line := "summary: " + strings.Join(parts, ", ")
	if len(acts) > 0 {
		line += "; effects: " + strings.Join(acts, ", ")
	}
	if !d.Changed() {
		line += "; nothing for a runtime to do"
	}
	return line
}

func count(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// listText shows a list of the plan's records: [a; b], or [] when empty.
func listText[T any](l []T, show func(T) string) string {
	parts := make([]string, len(l))
	for i, x := range l {
		parts[i] = show(x)
	}
	return "[" + strings.Join(parts, "; ") + "]"
}
