package client_test

import (
	"errors"
	"net/http"
	"testing"

	"github.com/stewardhq/steward/internal/httpapi/apitest"
	"github.com/stewardhq/steward/internal/server"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
	"github.com/stewardhq/steward/pkg/client"
)

const adminToken = "client-test-admin-token"

// withToken runs the server with authentication on.
func withToken(c *server.Config) {
	c.Dev = false
	c.APIToken = adminToken
}

func ptr[T any](v T) *T { return &v }

func TestClient_AgainstARealServer(t *testing.T) {
	t.Parallel()
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		s := apitest.Start(t, engine, apitest.Fast, withToken)
		c, err := client.New(s.URL(), adminToken)
		if err != nil {
			t.Fatal(err)
		}
		ctx := t.Context()

		body := client.PolicyCreate{DisplayName: "VM cap", PolicyType: client.GLOBAL, Priority: ptr(10),
			RegoCode: "package steward.vmcap\n\nmain := {\"constraints\": {\"vcpu.count\": {\"maximum\": 16}}}\n"}
		created, err := c.CreatePolicyWithResponse(ctx, &client.CreatePolicyParams{Id: ptr(client.ClientId("vm-cap"))}, body)
		if err != nil {
			t.Fatal(err)
		}
		if err := client.Check(created.HTTPResponse, created.Body); err != nil || created.JSON201 == nil {
			t.Fatalf("create: %v (status %d)", err, created.StatusCode())
		}
		if created.JSON201.Id == nil || *created.JSON201.Id != "vm-cap" || created.JSON201.Priority != 10 || !created.JSON201.Enabled {
			t.Errorf("created %+v", *created.JSON201)
		}

		got, err := c.GetPolicyWithResponse(ctx, "vm-cap")
		if err != nil || got.JSON200 == nil || got.JSON200.DisplayName != "VM cap" {
			t.Fatalf("get: %v, %+v", err, got.JSON200)
		}
		list, err := c.ListPoliciesWithResponse(ctx, &client.ListPoliciesParams{PolicyType: ptr(client.GLOBAL)})
		if err != nil || list.JSON200 == nil || len(list.JSON200.Results) != 1 || list.JSON200.NextPageToken != "" {
			t.Fatalf("list: %v, %+v", err, list.JSON200)
		}

		// Problems decode into one error type, with their reason and members.
		missing, err := c.GetPolicyWithResponse(ctx, "nope")
		if err != nil {
			t.Fatal(err)
		}
		var p *client.ProblemError
		if err := client.Check(missing.HTTPResponse, missing.Body); !errors.As(err, &p) ||
			p.Status != http.StatusNotFound || p.Reason != "POLICY_NOT_FOUND" || p.Instance == "" {
			t.Fatalf("get a missing policy: %v (%+v)", err, p)
		}
		again, err := c.CreatePolicyWithResponse(ctx, &client.CreatePolicyParams{Id: ptr(client.ClientId("vm-cap"))}, body)
		if err != nil {
			t.Fatal(err)
		}
		if err := client.Check(again.HTTPResponse, again.Body); !errors.As(err, &p) || p.Status != http.StatusConflict {
			t.Fatalf("create twice: %v", err)
		}
		bad, err := c.CreatePolicyWithResponse(ctx, &client.CreatePolicyParams{Id: ptr(client.ClientId("123-bad"))}, body)
		if err != nil {
			t.Fatal(err)
		}
		if err := client.Check(bad.HTTPResponse, bad.Body); !errors.As(err, &p) || p.Reason != "INVALID_ARGUMENT" ||
			len(p.Fields) == 0 || p.Fields[0].Field != "id" {
			t.Fatalf("a digit-first id: %v (%+v)", err, p)
		}

		// Without the token: 401, as a ProblemError too.
		anon, err := client.New(s.URL(), "")
		if err != nil {
			t.Fatal(err)
		}
		denied, err := anon.GetPolicyWithResponse(ctx, "vm-cap")
		if err != nil {
			t.Fatal(err)
		}
		if err := client.Check(denied.HTTPResponse, denied.Body); !errors.As(err, &p) || p.Status != http.StatusUnauthorized {
			t.Fatalf("no token: %v", err)
		}
	})
}

func TestNew_RefusesAServerThatIsNotAURL(t *testing.T) {
	t.Parallel()
	if _, err := client.New("127.0.0.1:8080", ""); err == nil {
		t.Fatal("New accepted a server without a scheme")
	}
}

func TestCheck_BodyThatIsNotAProblem(t *testing.T) {
	t.Parallel()
	rsp := &http.Response{StatusCode: http.StatusBadGateway, Header: http.Header{"Content-Type": {"text/html"}}}
	var p *client.ProblemError
	if err := client.Check(rsp, []byte("<h1>bad gateway</h1>")); !errors.As(err, &p) ||
		p.Status != http.StatusBadGateway || p.Reason != "BAD_GATEWAY" || p.Detail != "<h1>bad gateway</h1>" {
		t.Fatalf("Check: %v (%+v)", err, p)
	}
	if err := client.Check(&http.Response{StatusCode: http.StatusNoContent}, nil); err != nil {
		t.Fatalf("204: %v", err)
	}
}
