package remote

import "github.com/mcpc-dev/mcpc/internal/diag"

// Validation is what `mcpc validate --workspace` says of a servers.json.
type Validation struct {
	// Diagnostics are the file's own and, when its sealed parts were
	// opened, those of each that does not open (remote-sealed).
	Diagnostics []diag.Diagnostic
	// OpenedWith names the host variable whose secret opened the sealed
	// parts. It is "" when they were not opened: the file is not used
	// (File.Problem), the host has no secret (NoSecret) or no scope was
	// given.
	OpenedWith string
	NoSecret   bool
}

// Validate checks f, and with the host secret of lookup and a chat scope
// (scope may be empty) whether each entry's sealed part opens for it.
func Validate(f *File, scope string, lookup func(name string) string) (*Validation, error) {
	v := &Validation{Diagnostics: f.Diagnostics}
	secret, from, err := Secret(lookup)
	v.NoSecret = err != nil
	if f.Problem != "" || v.NoSecret || scope == "" {
		return v, nil
	}
	key, err := NewKey(secret)
	if err != nil {
		return nil, err
	}
	v.Diagnostics = append(append([]diag.Diagnostic(nil), f.Diagnostics...), CheckSealed(f, key, scope, from)...)
	v.OpenedWith = from
	return v, nil
}
