package httpapi

import (
	"encoding/json"
	"testing"
)

// AppendString writes every string as a valid JSON string that reads back
// as encoding/json's encoding of it does (invalid UTF-8 included).
func TestAppendString_AsEncodingJSON(t *testing.T) {
	cases := []string{"", "plain", `"quoted" \back\`, "<script>&</script>", "line\nbreak\r\ttab",
		"\x00\x01\x1f\x7f", "é ü 日本 🚀", "\u2028\u2029", "bad \xff\xfe utf8 \xc3", "end\xe2\x82"}
	for _, s := range cases {
		got := AppendString([]byte("x"), s)[1:]
		if !json.Valid(got) {
			t.Errorf("AppendString(%q) = %s: not valid JSON", s, got)
			continue
		}
		want, _ := json.Marshal(s)
		var a, b string
		_ = json.Unmarshal(got, &a)
		_ = json.Unmarshal(want, &b)
		if a != b {
			t.Errorf("AppendString(%q) reads back %q; encoding/json's reads back %q", s, a, b)
		}
	}
}
