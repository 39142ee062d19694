package compile

import (
	"encoding/json"
	"sort"
	"strings"
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
	r *strings.Replacer
	n int
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
	return &Redactor{r: strings.NewReplacer(pairs...), n: len(forms)}
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
