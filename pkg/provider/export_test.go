package provider_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/stewardhq/steward/pkg/provider"
)

// exportingStub exports "data of <id>", or fails after half of it for
// instance "breaks".
type exportingStub struct {
	stubProvider
	mu       sync.Mutex
	readOnly map[string]bool
}

func (p *exportingStub) BeginExport(_ context.Context, id string) error {
	if id == "missing" {
		return provider.ErrNotFound
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.readOnly[id] = true
	return nil
}

func (p *exportingStub) EndExport(_ context.Context, id string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.readOnly, id)
	return nil
}

func (p *exportingStub) Export(_ context.Context, id string, w io.Writer) error {
	if id == "missing" {
		return provider.ErrNotFound
	}
	data := bytes.Repeat([]byte("data of "+id+"\n"), 10_000)
	if id == "breaks" {
		_, _ = w.Write(data[:len(data)/2])
		return errors.New("the server went away")
	}
	_, err := w.Write(data)
	return err
}

// Issue 24: Steward begins an export with its token and gets a grant; the
// grant's token, and only it, reads that one instance's export (another
// instance's, a made-up or Steward's own token get 401); an export that
// fails midway reaches the reader as a broken stream; an open server
// serves no export route at all.
func TestServer_ExportOnlyToTheGrantHolder(t *testing.T) {
	t.Parallel()
	stub := &exportingStub{readOnly: map[string]bool{}}
	srv := serve(t, stub, provider.ServerConfig{Token: "stp_secret"})
	c := provider.NewClient(provider.ClientConfig{})
	ctx := provider.WithCallToken(t.Context(), "stp_secret")

	if _, err := c.BeginExport(t.Context(), srv, "i-1"); err == nil {
		t.Fatal("an export began without Steward's token")
	}
	g, err := c.BeginExport(ctx, srv, "i-1")
	if err != nil || g.InstanceID != "i-1" || !strings.HasPrefix(g.Token, "stx_") || g.ExpireTime.IsZero() {
		t.Fatalf("begin export: %+v, %v", g, err)
	}
	if !stub.readOnly["i-1"] {
		t.Error("BeginExport was not called")
	}
	if _, err := c.BeginExport(ctx, srv, "missing"); !errors.Is(err, provider.ErrNotFound) {
		t.Errorf("begin the export of an unknown instance: %v, want ErrNotFound", err)
	}

	body, err := provider.OpenExport(t.Context(), nil, provider.ExportSource{Endpoint: srv, InstanceID: "i-1", Token: g.Token})
	if err != nil {
		t.Fatalf("open the export: %v", err)
	}
	got, err := io.ReadAll(body)
	_ = body.Close()
	if err != nil || !bytes.Equal(got, bytes.Repeat([]byte("data of i-1\n"), 10_000)) {
		t.Errorf("export read %d bytes, %v", len(got), err)
	}

	for name, src := range map[string]provider.ExportSource{
		"another instance": {Endpoint: srv, InstanceID: "i-2", Token: g.Token},
		"Steward's token":  {Endpoint: srv, InstanceID: "i-1", Token: "stp_secret"},
		"a forged token":   {Endpoint: srv, InstanceID: "i-1", Token: g.Token[:len(g.Token)-2] + "AA"},
	} {
		_, err := provider.OpenExport(t.Context(), nil, src)
		var re *provider.ResponseError
		if !errors.Is(err, provider.ErrExportRefused) || !errors.As(err, &re) || re.StatusCode != http.StatusUnauthorized {
			t.Errorf("export with %s: %v, want 401", name, err)
		}
	}

	gb, err := c.BeginExport(ctx, srv, "breaks")
	if err != nil {
		t.Fatal(err)
	}
	body, err = provider.OpenExport(t.Context(), nil, provider.ExportSource{Endpoint: srv, InstanceID: "breaks", Token: gb.Token})
	if err != nil {
		t.Fatalf("open the breaking export: %v", err)
	}
	_, err = io.ReadAll(body)
	_ = body.Close()
	if err == nil {
		t.Error("an export cut short read as whole")
	}

	if err := c.EndExport(ctx, srv, "i-1"); err != nil || stub.readOnly["i-1"] {
		t.Errorf("end export: %v (read-only %v)", err, stub.readOnly["i-1"])
	}

	open := serve(t, &exportingStub{readOnly: map[string]bool{}}, provider.ServerConfig{})
	for _, call := range [][2]string{{"POST", "/api/v1/services/i-1/export:begin"}, {"GET", "/api/v1/services/i-1/export"},
		{"POST", "/api/v1/services/i-1/export:end"}} {
		if a := send(t, call[0], open+call[1], `{}`); a.status != http.StatusUnauthorized {
			t.Errorf("%s %s on a server without a token: %d, want 401", call[0], call[1], a.status)
		}
	}
}
