package schema

import (
	"crypto/sha256"
	"encoding/hex"
	"math/big"
	"sync"
)

// The shapes and fast-path rules of the embedded schemas are derived from
// the compiled schemas by the same code as at run time (newValidator), when
// mcpc is built, and kept in builtin_gen.go: New then compiles no CUE.
// TestBuiltinFastPath derives them again and fails when the file differs;
// `go generate ./schema` rewrites it. A build whose schemas differ from
// those the file was derived from (builtinSum) derives them at run time, as
// correct as ever, only slower.
//
//go:generate go test -run ^TestBuiltinFastPath$ -update .

// builtinSchema is what New needs of the embedded schemas.
type builtinSchema struct {
	shapes  map[string]*shape
	rules   map[string]rule
	top     *shape
	nshapes int
	fastErr error
}

// builtin returns the built-in shapes and rules, or nil when the embedded
// schemas are not those they were derived from.
var builtin = sync.OnceValue(func() *builtinSchema {
	if schemaSum(Sources(), definitions) != builtinSum {
		return nil
	}
	return builtinFastPath()
})

// schemaSum is the SHA-256 of the schema files src as CUE compiles them
// and of the definitions defs.
func schemaSum(src map[string]string, defs []string) string {
	h := sha256.New()
	h.Write([]byte(schemaText(src)))
	for _, d := range defs {
		h.Write([]byte("\x00" + d))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// bigInt is the integer written in decimal s (a literal of builtin_gen.go).
func bigInt(s string) *big.Int {
	x, ok := new(big.Int).SetString(s, 10)
	if !ok {
		panic("schema: not an integer: " + s)
	}
	return x
}
