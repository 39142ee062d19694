package placeholder

import (
	"testing"

	"github.com/mcpc-dev/mcpc/internal/testmain"
)

func TestMain(m *testing.M) { testmain.Run(m) }
