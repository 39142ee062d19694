package denylist

import (
	"os"
	"path/filepath"
	"testing"
)

func TestDefaultDenies(t *testing.T) {
	l := Default()
	for name, want := range map[string]bool{
		"TELEGRAM_BOT_TOKEN": true, "GITHUB_TOKEN": true, "github_token": true, "MY_SERVICE_TOKEN": true,
		"DB_PASSWORD": true, "SIGNING_PRIVATE_KEY": true, "STRIPE_API_KEY": true, "APP_SECRET": true,
		"AWS_SESSION_TOKEN": true, "PATH": false, "HOME": false, "TOKEN": false, "TOKENS_URL": false, "API_KEY_ID": false,
	} {
		if got := l.Denied(name); got != want {
			t.Errorf("Denied(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestLoadReplacesTheList(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "deny.json")
	os.WriteFile(f, []byte(`{"names": ["ONLY_THIS"], "patterns": ["CORP_*"]}`), 0o644)
	l, err := Load(f)
	if err != nil {
		t.Fatal(err)
	}
	if !l.Denied("only_this") || !l.Denied("CORP_X") || l.Denied("GITHUB_TOKEN") {
		t.Errorf("loaded list does not replace the default")
	}
	os.WriteFile(f, []byte(`{"names": "x"}`), 0o644)
	if _, err := Load(f); err == nil {
		t.Errorf("a malformed list loads")
	}
	os.WriteFile(f, []byte(`{"names": [], "patterns": ["[" ]}`), 0o644)
	if _, err := Load(f); err == nil {
		t.Errorf("a bad pattern loads")
	}
}
