package compile

import (
	"encoding/json"
	"sort"
	"strings"
	"sync"
)

// Redacted replaces every known secret value in mcpc's output.
const Redacted = "[REDACTED]"

// minSecretLen: shorter values are too common to redact without mangling
// ordinary text (SPEC §2.4).
const minSecretLen = 4

// Redactor replaces known secret values with [REDACTED], also in their
// JSON-escaped form. The zero value redacts nothing. It is immutable once
// built and safe for concurrent use.
type Redactor struct {
	r     *strings.Replacer
	n     int
	forms []string // what r replaces, longest first

	piecesOnce sync.Once
	pieces     map[string]struct{} // for RedactFragments
}

// NewRedactor builds a redactor for the given secret values.
func NewRedactor(secrets []string) *Redactor {
	seen := map[string]bool{}
	var forms []string
	add := func(s string) {
		if len(s) >= minSecretLen && !seen[s] {
			seen[s] = true
			forms = append(forms, s)
		}
	}
	for _, s := range secrets {
		add(s)
		if b, err := json.Marshal(s); err == nil {
			add(string(b[1 : len(b)-1]))
		}
	}
	// Longest first, so that a secret containing another is replaced whole.
	sort.Slice(forms, func(i, j int) bool {
		if len(forms[i]) != len(forms[j]) {
			return len(forms[i]) > len(forms[j])
		}
		return forms[i] < forms[j]
	})
	if len(forms) == 0 {
		return &Redactor{}
	}
	pairs := make([]string, 0, 2*len(forms))
	for _, f := range forms {
		pairs = append(pairs, f, Redacted)
	}
	return &Redactor{r: strings.NewReplacer(pairs...), n: len(forms), forms: forms}
}

// Redact returns s with every known secret replaced.
func (r *Redactor) Redact(s string) string {
	if r == nil || r.r == nil {
		return s
	}
	return r.r.Replace(s)
}

// Empty reports whether there is nothing to redact.
func (r *Redactor) Empty() bool { return r == nil || r.n == 0 }

// FragmentMin is the shortest piece of a secret that RedactFragments hides.
const FragmentMin = 8

// RedactFragments is Redact, and then also hides every run of FragmentMin
// or more bytes that is a piece of a known secret. It is for text that
// another library may have cut in the middle of a secret before mcpc saw
// it, such as a JSON decoder's error quoting the first 32 bytes of a value:
// Redact matches whole secrets only. Use it on such messages alone; it
// also hides ordinary words that happen to be pieces of a secret.
//
// A run is hidden if each of its FragmentMin-byte windows occurs in some
// secret, so its cost is linear in len(s), however long the message.
func (r *Redactor) RedactFragments(s string) string {
	s = r.Redact(s)
	if r.Empty() || len(s) < FragmentMin {
		return s
	}
	r.piecesOnce.Do(r.buildPieces)
	end := -1 // the end of the run being hidden
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if i+FragmentMin <= len(s) {
			if _, ok := r.pieces[s[i:i+FragmentMin]]; ok {
				if i > end { // a run that touches the last one continues it
					b.WriteString(Redacted)
				}
				end = i + FragmentMin
				continue
			}
		}
		if i >= end {
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

// buildPieces indexes every FragmentMin-byte window of every secret form.
func (r *Redactor) buildPieces() {
	r.pieces = map[string]struct{}{}
	for _, f := range r.forms {
		for j := 0; j+FragmentMin <= len(f); j++ {
			r.pieces[f[j:j+FragmentMin]] = struct{}{}
		}
	}
}
