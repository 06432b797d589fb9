package adapter

import (
	"io"
	"net/http"
	"net/http/httptest"
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
