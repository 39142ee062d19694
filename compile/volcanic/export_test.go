package volcanic

import (
	"path/filepath"

	"github.com/mcpc-dev/mcpc/compile"
)

// Test helpers for the tests of package volcanic_test, which compile the
// deployments of both profiles side by side.
var (
	FakeFS     = fakeFS
	PeakHeap   = peakHeap
	InputBytes = inputBytes

	SettingsOf    = settingsOf
	AppSettingsOf = appSettingsOf
)

func settingsOf(text string) (compile.Options, map[string][]byte) {
	return compile.Options{}, map[string][]byte{filepath.Join("agent", "settings.json"): []byte(text)}
}

func appSettingsOf(text string) (compile.Options, map[string][]byte) {
	return compile.Options{AppSettings: []string{"appsettings.json"}}, map[string][]byte{"appsettings.json": []byte(text)}
}
