package pgprovider

import "testing"

// A copy succeeds through pg_restore's errors only when each of them is
// a refused COMMENT ON EXTENSION, and pg_restore counted them all.
func TestOnlyExtensionComments(t *testing.T) {
	t.Parallel()
	comment := "pg_restore: error: could not execute query: ERROR:  must be owner of extension pg_trgm\n" +
		"Command was: COMMENT ON EXTENSION pg_trgm IS 'text similarity';\n"
	for name, tc := range map[string]struct {
		stderr string
		want   bool
	}{
		"one comment":  {comment + "pg_restore: warning: errors ignored on restore: 1\n", true},
		"two comments": {comment + comment + "pg_restore: warning: errors ignored on restore: 2\n", true},
		"another statement": {comment + "pg_restore: error: could not execute query: ERROR:  permission denied\n" +
			"Command was: CREATE TABLE t (id int);\npg_restore: warning: errors ignored on restore: 2\n", false},
		"a broken stream":  {comment + "pg_restore: error: could not read input file: end of file\n", false},
		"no count":         {comment, false},
		"nothing said":     {"", false},
		"a count mismatch": {comment + "pg_restore: warning: errors ignored on restore: 3\n", false},
	} {
		if got := onlyExtensionComments(tc.stderr); got != tc.want {
			t.Errorf("%s: onlyExtensionComments = %v, want %v", name, got, tc.want)
		}
	}
}
