package provider

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The bounds of a failure detail (see [Detail]). A failure detail says
// why an instance failed in the words of what failed: a process's last
// lines of stderr, a pod's waiting or terminated reason and message, a
// database's error. A provider adds it to the Message of a FAILED
// [StatusReport] and [Instance], after what it saw ("process exited with
// status 1; stderr: sleep: invalid time interval 'x'"), so that it
// reaches the order's status message, where people look. It has no member
// of its own: the message carries it.
const (
	MaxDetailLines = 5
	MaxDetailLen   = 1024
)

// urlPassword is the password of a URL's userinfo (scheme://user:pw@host).
var urlPassword = regexp.MustCompile(`(://[^\s:/@]*):[^\s@]*@`)

// settingPassword is a password=… setting (a connection string's, an
// environment variable's such as PGPASSWORD=…), quoted or not.
var settingPassword = regexp.MustCompile(`(?i)(password|passwd|pwd)(\s*=\s*)('[^']*'|"[^"]*"|\S+)`)

// Detail makes text, which may come from a workload and say anything, a
// failure detail for a status message: its last [MaxDetailLines]
// non-blank lines, each trimmed of spaces, joined by " | " on one line,
// with other control characters made spaces, a URL's password and a
// password=… setting masked ("xxxxx"), and at most [MaxDetailLen] bytes,
// keeping the end (the last lines say most) after a leading "…". A text
// without a non-blank line gives "".
func Detail(text string) string {
	text = strings.ToValidUTF8(text, "\uFFFD")
	var lines []string
	for line := range strings.Lines(text) {
		line = strings.Map(func(r rune) rune {
			if unicode.IsControl(r) {
				return ' '
			}
			return r
		}, line)
		if line = strings.TrimSpace(line); line != "" {
			lines = append(lines, line)
		}
	}
	lines = lines[max(0, len(lines)-MaxDetailLines):]
	s := strings.Join(lines, " | ")
	s = urlPassword.ReplaceAllString(s, "${1}:xxxxx@")
	s = settingPassword.ReplaceAllString(s, "${1}${2}xxxxx")
	if len(s) <= MaxDetailLen {
		return s
	}
	const ellipsis = "…"
	cut := len(s) - (MaxDetailLen - len(ellipsis))
	for !utf8.RuneStart(s[cut]) { // start at a whole character
		cut++
	}
	return ellipsis + s[cut:]
}
