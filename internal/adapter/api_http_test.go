package adapter

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
)

func TestHTTPAPI_SendsTheRequestWithTheToken(t *testing.T) {
	t.Parallel()
	var got struct {
		method, path, auth, contentType, body string
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got.method, got.path, got.auth, got.contentType, got.body = r.Method, r.URL.Path, r.Header.Get("Authorization"), r.Header.Get("Content-Type"), string(b)
		w.WriteHeader(http.StatusTeapot)
		_, _ = w.Write([]byte(`{"ok":1}`))
	}))
	defer srv.Close()

	api := &HTTPAPI{BaseURL: srv.URL + "/", Token: "s3cret", Client: srv.Client()}
	status, body, err := api.Do(t.Context(), http.MethodPut, "/api/v1/x", []byte(`{"a":1}`))
	if err != nil || status != http.StatusTeapot || string(body) != `{"ok":1}` {
		t.Fatalf("Do = %d %s %v: every answer comes back, 4xx included", status, body, err)
	}
	if got.method != http.MethodPut || got.path != "/api/v1/x" || got.auth != "Bearer s3cret" ||
		got.contentType != "application/json" || got.body != `{"a":1}` {
		t.Errorf("request = %+v", got)
	}

	noToken := &HTTPAPI{BaseURL: srv.URL, Client: srv.Client()}
	if _, _, err := noToken.Do(t.Context(), http.MethodGet, "/y", nil); err != nil || got.auth != "" || got.contentType != "" {
		t.Errorf("without a token: auth %q, content type %q, err %v", got.auth, got.contentType, err)
	}
}

func TestHTTPAPI_NoAnswerIsAnError(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.NotFoundHandler())
	srv.Close()
	if _, _, err := (&HTTPAPI{BaseURL: srv.URL}).Do(t.Context(), http.MethodGet, "/x", nil); err == nil {
		t.Error("Do against a closed server succeeded")
	}
}

// Issue 28: with several Steward replicas, a call that cannot connect to
// one goes to the next, and later calls start from the one that answered.
// A replica that answered, even 503, is not asked again elsewhere: the
// request may have been done.
func TestHTTPAPI_MovesToTheNextReplicaOnlyWhenOneCannotBeReached(t *testing.T) {
	t.Parallel()
	var answered, refusedLater atomic.Int32
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		answered.Add(1)
		w.WriteHeader(http.StatusNoContent)
	}))
	defer up.Close()
	down := httptest.NewServer(http.NotFoundHandler())
	downURL := down.URL
	down.Close() // nothing listens there now: a dial is refused

	api := &HTTPAPI{BaseURLs: []string{downURL, up.URL}}
	for i := range 3 {
		if status, _, err := api.Do(t.Context(), http.MethodPut, "/x", nil); err != nil || status != http.StatusNoContent {
			t.Fatalf("call %d = %d, %v; want the second replica's 204", i, status, err)
		}
	}
	if n := answered.Load(); n != 3 {
		t.Errorf("the reachable replica answered %d calls, want 3", n)
	}

	busy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer busy.Close()
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		refusedLater.Add(1)
	}))
	defer other.Close()
	api = &HTTPAPI{BaseURLs: []string{busy.URL, other.URL}}
	if status, _, err := api.Do(t.Context(), http.MethodPost, "/x", []byte(`{}`)); err != nil || status != http.StatusServiceUnavailable {
		t.Fatalf("Do = %d, %v; want the first replica's 503", status, err)
	}
	if n := refusedLater.Load(); n != 0 {
		t.Errorf("a request answered 503 was sent again to another replica (%d times)", n)
	}

	api = &HTTPAPI{BaseURLs: []string{downURL}}
	if _, _, err := api.Do(t.Context(), http.MethodGet, "/x", nil); err == nil {
		t.Error("Do with no reachable replica succeeded")
	}
}
