package server_test

import (
	"fmt"
	"maps"
	"net/http"
	"slices"
	"testing"

	"github.com/stewardhq/steward/internal/httpapi/apitest"
	"github.com/stewardhq/steward/internal/store"
	"github.com/stewardhq/steward/internal/store/storetest"
	"github.com/stewardhq/steward/pkg/provider/providertest"
)

// roundTrip is how a resource read with GET is sent back.
type roundTrip struct {
	// update is the method of its update route ("" when it has none).
	update string
	// unique changes the members of a GET body that must differ between
	// two resources (names, priorities) before it creates a second one.
	unique func(body map[string]any, n int)
}

var roundTrips = map[string]roundTrip{
	"ServiceTypes": {update: http.MethodPut},
	"CatalogItems": {update: http.MethodPatch},
	"Lifecycles":   {update: http.MethodPut},
	"Orders":       {update: http.MethodPatch},
	"Policies": {update: http.MethodPatch, unique: func(b map[string]any, n int) {
		b["display_name"], b["priority"] = fmt.Sprintf("round trip %d", n), 500+n
		b["rego_code"] = fmt.Sprintf("package roundtrip%d\nmain := {}", n)
	}},
	"Providers": {update: http.MethodPatch, unique: func(b map[string]any, n int) {
		b["name"] = fmt.Sprintf("round-trip-%d", n)
	}},
	"ServiceTypeInstances": {unique: func(b map[string]any, n int) {
		b["spec"].(map[string]any)["metadata"] = map[string]any{"name": fmt.Sprintf("round-trip-%d", n)}
	}},
}

// getBody reads a resource as a client would, to send it back.
func getBody(t *testing.T, s *apitest.Server, path string) map[string]any {
	t.Helper()
	var b map[string]any
	s.Do(t, "GET", path, nil).Want(t, http.StatusOK).JSON(t, &b)
	return b
}

// Issue 22, item 7: a resource read with GET can be sent back as it is: its
// output-only members (path, create_time, etag, state, status…) are
// accepted and ignored by every create and update (AIP-203), a create's
// body "id" names the new resource, and only a member the resource does
// not have, or an id that contradicts ?id=, is refused.
func TestRequestBodies_GetAnswerCanBeSentBack(t *testing.T) {
	t.Parallel()
	if got, want := slices.Sorted(maps.Keys(roundTrips)), slices.Sorted(maps.Keys(idCreates)); !slices.Equal(got, want) {
		t.Fatalf("round trips cover %q, want every create %q", got, want)
	}
	storetest.ForEachEngine(t, func(t *testing.T, engine store.Engine) {
		t.Parallel()
		s, p := startWithFixtures(t, engine)
		n := 0
		for name, c := range idCreates {
			rt := roundTrips[name]
			t.Run(name, func(t *testing.T) {
				n++
				body := c.body
				if name == "Providers" {
					body = func(n int) any { return p.Registration(fmt.Sprintf("rt-sp-%d", n), "vm") }
				}
				id := fmt.Sprintf("rt-%d", n)
				s.Do(t, "POST", c.path+"?id="+id, body(n)).Want(t, c.created)
				if name == "Orders" {
					var instance string
					poll(t, "the provider got the order", func() bool {
						instance, _ = getBody(t, s, c.path+"/"+id)["instance_id"].(string)
						return instance != ""
					})
					p.WaitForCall(t, providertest.MethodCreate, instance)
					s.ReportStatus(t, instance, "RUNNING")
					poll(t, "the order is up", func() bool { return getBody(t, s, c.path+"/"+id)["state"] == "up" })
				}
				got := getBody(t, s, c.path+"/"+id)

				if rt.update != "" {
					if r := s.Do(t, rt.update, c.path+"/"+id, got); r.Status/100 != 2 {
						t.Fatalf("%s of the GET answer: %d %s", rt.update, r.Status, r.Body)
					}
				}

				// The same body creates another, named by its body's id
				// alone, or by the same id in both.
				for i, inQuery := range []bool{false, true} {
					n++
					again := getBody(t, s, c.path+"/"+id)
					newID := fmt.Sprintf("rt-%d-%d", n, i)
					again["id"] = newID
					if rt.unique != nil {
						rt.unique(again, n)
					}
					target := c.path
					if inQuery {
						target += "?id=" + newID
					}
					var created struct{ ID string }
					s.Do(t, "POST", target, again).Want(t, c.created).JSON(t, &created)
					if created.ID != newID {
						t.Errorf("created %q, want the body's id %q", created.ID, newID)
					}
				}

				mismatch := getBody(t, s, c.path+"/"+id)
				pr := s.Do(t, "POST", c.path+"?id=other-id", mismatch).WantProblem(t, http.StatusBadRequest, "INVALID_ARGUMENT")
				if msgs := fieldsNamed(pr, "id"); len(msgs) != 1 {
					t.Errorf("id mismatch: fields %v, want one naming id", pr.Fields)
				}
				if name != "Lifecycles" && (pr.Extra["id"] != "other-id" || pr.Extra["body_id"] != id) {
					t.Errorf("id mismatch: problem %v, want id other-id and body_id %s", pr.Extra, id)
				}

				unknown := getBody(t, s, c.path+"/"+id)
				unknown["colour"] = "red"
				pr = s.Do(t, "POST", c.path, unknown).WantProblem(t, http.StatusBadRequest, "INVALID_ARGUMENT")
				if msgs := fieldsNamed(pr, "colour"); len(msgs) != 1 {
					t.Errorf("unknown member: fields %v, want one naming colour", pr.Fields)
				}
			})
		}
	})
}
