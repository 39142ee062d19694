package runtime

// The tests compile deployments (secretref_test.go): every profile linked.
import _ "github.com/mcpc-dev/mcpc/compile/profiles"
