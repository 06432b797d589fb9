package provider

import (
	"context"
	"errors"
	"math/rand/v2"
	"net/http"
	"time"
)

// RetryPolicy says how [Registrar] and [HTTPReporter] retry a call that
// failed for a reason that may pass: a network error or timeout, a 5xx,
// 408 or 429. Waits grow exponentially (×2) from Initial to Max, each with ±20%
// jitter so that many providers restarted together do not retry in step; a
// Retry-After header longer than the wait is honoured, up to Max. The zero
// value means the defaults of the type that uses it.
type RetryPolicy struct {
	// Initial is the wait before the first retry. Defaults to 200ms.
	Initial time.Duration
	// Max caps each wait. Defaults to 30s for [Registrar] and 5s for
	// [HTTPReporter].
	Max time.Duration
	// MaxAttempts bounds the attempts, the first one included. Defaults to
	// unlimited (until ctx ends) for [Registrar] and 5 for [HTTPReporter].
	MaxAttempts int
	// SleepFunc waits d, or returns ctx's error when ctx ends first.
	// Defaults to a timer. Tests replace it to record the waits and return
	// at once.
	SleepFunc func(ctx context.Context, d time.Duration) error
}

// withDefaults fills the zero fields; maxWait and attempts are the user's.
func (p RetryPolicy) withDefaults(maxWait time.Duration, attempts int) RetryPolicy {
	p.Initial = cmpDuration(p.Initial, 200*time.Millisecond)
	p.Max = cmpDuration(p.Max, maxWait)
	p.Max = max(p.Max, p.Initial)
	if p.MaxAttempts <= 0 {
		p.MaxAttempts = attempts
	}
	if p.SleepFunc == nil {
		p.SleepFunc = sleep
	}
	return p
}

// wait returns the wait before retry n (0 for the first retry), with jitter
// j in [0, 1): j = 0.5 gives the exact exponential value. It never exceeds
// Max, so waits at the cap fall in [0.8·Max, Max].
func (p RetryPolicy) wait(n int, j float64) time.Duration {
	d := p.Initial
	for range n {
		if d >= p.Max/2 {
			d = p.Max
			break
		}
		d *= 2
	}
	d = min(d, p.Max)
	return min(time.Duration(float64(d)*(0.8+0.4*j)), p.Max)
}

// run calls attempt until it succeeds, fails for good, the attempts run out
// or ctx ends; onRetry, if set, hears about each failure that is retried.
// When ctx ends during a wait, the error wraps ctx's error and the last
// attempt's.
func (p RetryPolicy) run(ctx context.Context, attempt func(context.Context) error, onRetry func(n int, wait time.Duration, err error)) error {
	for n := 1; ; n++ {
		err := attempt(ctx)
		if err == nil || !retryable(err) || (p.MaxAttempts > 0 && n >= p.MaxAttempts) {
			return err
		}
		d := p.wait(n-1, rand.Float64())
		var re *ResponseError
		if errors.As(err, &re) && re.retryAfter > d {
			d = min(re.retryAfter, p.Max)
		}
		if onRetry != nil {
			onRetry(n, d, err)
		}
		if serr := p.SleepFunc(ctx, d); serr != nil {
			return errors.Join(serr, err)
		}
	}
}

// retryable reports whether err may pass if the call is repeated.
func retryable(err error) bool {
	var re *ResponseError
	if errors.As(err, &re) {
		return retryableStatus(re.StatusCode) || re.StatusCode >= 500
	}
	return errors.Is(err, ErrTimeout) || errors.Is(err, ErrUnreachable)
}

// retryableStatus reports whether a 4xx answer asks to try again later.
func retryableStatus(code int) bool {
	return code == http.StatusRequestTimeout || code == http.StatusTooManyRequests
}

// Refused reports whether err says that repeating the call cannot help:
// Steward answered a 4xx other than 408 and 429 (an unknown instance, 404,
// included), or the report is one Steward would refuse
// ([ErrInvalidReport]). A [ReportQueue] gives a report up only then; any
// other failure (unreachable, a timeout, a 5xx, an error it cannot
// classify) may pass.
func Refused(err error) bool {
	if errors.Is(err, ErrInvalidReport) {
		return true
	}
	var re *ResponseError
	return errors.As(err, &re) && re.StatusCode >= 400 && re.StatusCode < 500 && !retryableStatus(re.StatusCode)
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
