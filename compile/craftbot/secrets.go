package craftbot

import "github.com/mcpc-dev/mcpc/compile"

// knownFields are the fields of mcp_config.json whose string values are
// settings, never credentials.
var knownFields = map[string]bool{
	FieldAutoConnect: true, FieldServers: true, FieldName: true, FieldDescription: true, FieldTransport: true,
	FieldCommand: true, FieldArgs: true, FieldURL: true, FieldEnabled: true, FieldActionSet: true,
}

// SecretSpans returns the byte spans (quotes excluded) of every string in
// data that is the value of an object key other than the fields of
// mcp_config.json: the values of env, where CraftBot keeps credentials
// literally, and of unknown fields. Output must never show them; excerpts
// print them as [REDACTED], whatever their length. The scan is lexical, so
// it also finds them in a file that is not valid JSON, whose syntax error
// may stand on the line of a token.
func SecretSpans(data []byte) []compile.Span {
	var out []compile.Span
	lastKey := ""
	var prev byte // the last byte outside strings that is not white space
	for i := 0; i < len(data); i++ {
		c := data[i]
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		case '"':
			j := i + 1
			for j < len(data) && data[j] != '"' {
				if data[j] == '\\' {
					j++
				}
				j++
			}
			end := min(j, len(data))
			if prev == ':' {
				if !knownFields[lastKey] && end > i+1 {
					out = append(out, compile.Span{Start: i + 1, End: end})
				}
			} else {
				lastKey = string(data[i+1 : end])
			}
			i, prev = j, '"'
		default:
			prev = c
		}
	}
	return out
}
