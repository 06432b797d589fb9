package cli_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
)

// {n} in a bench's path and body is each request's number, so that one run
// creates orders of its own ids and another deletes them (the mixed load
// of issue 46); with --unique-idempotency-key each still has its own key.
func TestBench_NumbersPathAndBody(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var got []string
	keys := map[string]bool{}
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, r.URL.RequestURI()+" "+string(body))
		keys[r.Header.Get("Idempotency-Key")] = true
		mu.Unlock()
		w.WriteHeader(http.StatusCreated)
	}))
	t.Cleanup(target.Close)
	code, _, stderr := runSteward(t, stewardBinary(t), "bench", "--url", target.URL, "--method", "POST",
		"--path", "/x?id=o-{n}", "--body", `{"name":"o-{n}"}`, "--unique-idempotency-key",
		"-n", "3", "-c", "1", "--warmup", "0", "--floor-duration", "0")
	if code != 0 {
		t.Fatalf("bench exited %d: %s", code, stderr)
	}
	slices.Sort(got)
	want := []string{`/x?id=o-0 {"name":"o-0"}`, `/x?id=o-1 {"name":"o-1"}`, `/x?id=o-2 {"name":"o-2"}`}
	if !slices.Equal(got, want) || len(keys) != 3 || keys[""] {
		t.Errorf("requests %q with %d keys; want %q, each with a key of its own", got, len(keys), want)
	}
}
