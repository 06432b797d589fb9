package bench

import "errors"

// ErrInvalidConfig is returned by [Run], wrapped with the reason, when the
// [Config] cannot describe a run: no or a malformed target URL, a method or
// path that makes no valid request, or a negative count or duration.
var ErrInvalidConfig = errors.New("invalid bench config")
