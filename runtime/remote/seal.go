package remote

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/mcpc-dev/mcpc/internal/diag"
	"github.com/mcpc-dev/mcpc/policies/rules"
)

// Sealing (SPEC §3): sealed = base64(nonce(12) ‖ AES-256-GCM(plaintext) ‖ tag)
// of the JSON {"headers": {...}}, with the key HKDF-SHA256(secret, salt
// empty, info "mcpc/remote/v1") and the associated data
// ["mcpc/remote/v1", scope, name, url, transport, tools, auth].

// Info is the HKDF info string and the first element of the associated data.
const Info = "mcpc/remote/v1"

// Host variables that hold the secret, in order of preference.
const (
	SecretVar         = "MCP_ENCRYPTION_SECRET"
	FallbackSecretVar = "TELEGRAM_BOT_TOKEN"
)

const (
	nonceSize = 12
	tagSize   = 16
)

// ErrNoSecret means neither MCP_ENCRYPTION_SECRET nor TELEGRAM_BOT_TOKEN is
// set (non-empty) in the host environment.
var ErrNoSecret = errors.New("no host secret: set " + SecretVar + " (or " + FallbackSecretVar + ") in the host environment; without it no remote server can be sealed or opened")

// ErrNotOpen is the error of an entry whose sealed part does not open: it was
// written or edited without the host secret, copied from another chat, sealed
// with another secret, or damaged.
var ErrNotOpen = errors.New("the sealed part does not open")

// Secret returns the host secret from a host environment: the value of
// MCP_ENCRYPTION_SECRET, else of TELEGRAM_BOT_TOKEN (an empty value counts as
// unset), and the name of the variable it came from.
func Secret(lookup func(name string) string) (secret, from string, err error) {
	for _, name := range []string{SecretVar, FallbackSecretVar} {
		if v := lookup(name); v != "" {
			return v, name, nil
		}
	}
	return "", "", ErrNoSecret
}

// Key seals and opens entries. It is safe for concurrent use.
type Key struct {
	aead cipher.AEAD
}

// NewKey derives the sealing key from the host secret.
func NewKey(secret string) (*Key, error) {
	if secret == "" {
		return nil, ErrNoSecret
	}
	k, err := hkdf.Key(sha256.New, []byte(secret), nil, Info, 32)
	if err != nil {
		return nil, fmt.Errorf("deriving the sealing key: %w", err)
	}
	block, err := aes.NewCipher(k)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &Key{aead: aead}, nil
}

// sealedPayload is the plaintext of the sealed part.
type sealedPayload struct {
	Headers map[string]string `json:"headers"`
}

// Seal encrypts headers for the entry s of the chat scope and returns the
// value of "sealed".
func (k *Key) Seal(scope string, s Server, headers Headers) (string, error) {
	h := map[string]string{}
	for name, v := range headers {
		h[name] = v
	}
	plain, err := json.Marshal(sealedPayload{Headers: h})
	if err != nil {
		return "", err
	}
	nonce := make([]byte, nonceSize, nonceSize+len(plain)+tagSize)
	if _, err := rand.Read(nonce); err != nil {
		return "", fmt.Errorf("reading random bytes: %w", err)
	}
	out := k.aead.Seal(nonce, nonce, plain, AssociatedData(scope, s))
	return base64.StdEncoding.EncodeToString(out), nil
}

// NotOpenReason is why an entry that does not open is skipped.
const NotOpenReason = "does not open: it was written or edited without the host secret, copied from another chat, or sealed with another secret; add it again with mcpc remote add"

// Open decrypts the sealed part of entry s of the chat scope. Any change to
// a visible field, the scope, the secret or the sealed bytes gives
// ErrNotOpen; a sealed value that is not base64 of at least a nonce and a
// tag gives an error that says so.
func (k *Key) Open(scope string, s Server, sealed string) (Headers, error) {
	raw, err := decodeSealed(sealed)
	if err != nil {
		return nil, err
	}
	plain, err := k.aead.Open(nil, raw[:nonceSize], raw[nonceSize:], AssociatedData(scope, s))
	if err != nil {
		return nil, ErrNotOpen
	}
	var p sealedPayload
	if err := json.Unmarshal(plain, &p); err != nil {
		// Only someone with the key can produce this: treat it as not open.
		return nil, ErrNotOpen
	}
	h := Headers{}
	for name, v := range p.Headers {
		h[name] = v
	}
	return h, nil
}

// decodeSealed checks the form of a sealed value: standard padded base64
// (canonical), holding at least a nonce and a tag.
func decodeSealed(sealed string) ([]byte, error) {
	raw, err := base64.StdEncoding.Strict().DecodeString(sealed)
	if err != nil {
		return nil, errors.New("sealed is not standard padded base64")
	}
	if len(raw) < nonceSize+tagSize {
		return nil, fmt.Errorf("sealed is too short: %d bytes, a sealed part has at least %d (nonce and tag)", len(raw), nonceSize+tagSize)
	}
	return raw, nil
}

// AssociatedData returns the associated data that binds a sealed part to the
// chat scope and every visible field of its entry: the compact JSON array
// ["mcpc/remote/v1", scope, name, url, transport, tools, auth], tools as null
// or its list. Strings are written as RFC 8785 (JCS) does: only ", \ and
// control characters are escaped, so every implementation that follows the
// same rule produces the same bytes.
func AssociatedData(scope string, s Server) []byte {
	var b strings.Builder
	b.WriteByte('[')
	for i, v := range []string{Info, scope, s.Name, s.URL, s.Transport} {
		if i > 0 {
			b.WriteByte(',')
		}
		jcsString(&b, v)
	}
	b.WriteByte(',')
	jcsList(&b, s.Tools, ",")
	b.WriteByte(',')
	jcsString(&b, s.Auth)
	b.WriteByte(']')
	return []byte(b.String())
}

// jcsList writes a tools allowlist: null for none, else a JSON list of JCS
// strings separated by sep.
func jcsList(b *strings.Builder, list []string, sep string) {
	if list == nil {
		b.WriteString("null")
		return
	}
	b.WriteByte('[')
	for i, t := range list {
		if i > 0 {
			b.WriteString(sep)
		}
		jcsString(b, t)
	}
	b.WriteByte(']')
}

// jcsString writes s as a JSON string the way RFC 8785 serializes strings.
// Invalid UTF-8 is written as U+FFFD (JSON text is UTF-8; values read from a
// file have already been checked).
func jcsString(b *strings.Builder, s string) {
	const hex = "0123456789abcdef"
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\b':
			b.WriteString(`\b`)
		case r == '\f':
			b.WriteString(`\f`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20:
			b.WriteString(`\u00`)
			b.WriteByte(hex[r>>4])
			b.WriteByte(hex[r&0xf])
		case r == utf8.RuneError:
			b.WriteRune(utf8.RuneError)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
}

// CheckSealed opens every valid entry of f with key for scope and reports
// each that does not open (remote-sealed). from names the host variable the
// secret came from, for the message.
func CheckSealed(f *File, key *Key, scope, from string) []diag.Diagnostic {
	var out []diag.Diagnostic
	for _, e := range f.Entries {
		if !e.Valid() {
			continue
		}
		if _, err := key.Open(scope, e.Server, e.Sealed); err != nil {
			out = append(out, rules.RemoteSealed.At(e.SealedPos,
				fmt.Sprintf("%s: the sealed part does not open with the secret from %s for scope %q: the entry was written or edited without the secret, copied from another chat, or sealed with another secret; the host skips it", e.Label(), from, scope),
				fmt.Sprintf("add the server again: mcpc remote add %s URL --workspace DIR --scope %s", e.Name, scope)))
		}
	}
	return out
}
