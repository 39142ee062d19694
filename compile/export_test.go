package compile

import "path/filepath"

// Test helpers for the tests of package compile_test, which may link the
// profiles that live in packages of their own (compile/craftbot imports
// compile, so only an external test can compile a craftbot deployment).
var (
	FakeFS     = fakeFS
	PeakHeap   = peakHeap
	InputBytes = inputBytes

	SettingsOf    = settingsOf
	AppSettingsOf = appSettingsOf
)

func settingsOf(text string) (Options, map[string][]byte) {
	return Options{}, map[string][]byte{filepath.Join("agent", "settings.json"): []byte(text)}
}

func appSettingsOf(text string) (Options, map[string][]byte) {
	return Options{AppSettings: []string{"appsettings.json"}}, map[string][]byte{"appsettings.json": []byte(text)}
}
