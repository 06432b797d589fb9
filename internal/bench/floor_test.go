package bench

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestFloorHandler_AnswersTheSameJSONOfTheAskedSize(t *testing.T) {
	t.Parallel()
	for _, size := range []int{MinFloorBodySize, MinFloorBodySize + 1, 300, 4096} {
		h := FloorHandler(size)
		for _, req := range []*http.Request{
			httptest.NewRequest("GET", "/floor", nil),
			httptest.NewRequest("POST", "/api/v1/anything?x=1", strings.NewReader(`{"a":1}`)),
		} {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			body := rec.Body.Bytes()
			if rec.Code != 200 || rec.Header().Get("Content-Type") != "application/json" {
				t.Fatalf("size %d %s: %d %q, want 200 application/json", size, req.Method, rec.Code, rec.Header().Get("Content-Type"))
			}
			if len(body) != size || rec.Header().Get("Content-Length") != itoa(size) {
				t.Errorf("size %d: body %d bytes, Content-Length %q", size, len(body), rec.Header().Get("Content-Length"))
			}
			var v map[string]string
			if err := json.Unmarshal(body, &v); err != nil || v["id"] != "floor" {
				t.Errorf("size %d: body %q is not the floor's JSON object: %v", size, body, err)
			}
			if n, _ := io.Copy(io.Discard, req.Body); n != 0 {
				t.Errorf("size %d %s: %d request bytes left unread", size, req.Method, n)
			}
		}
	}
}

func TestCompareToFloor_FractionsOfTheFloorsFigures(t *testing.T) {
	t.Parallel()
	floor := Result{Throughput: 40000, Latency: Latency{P50: 400 * time.Microsecond}}
	run := Result{Method: "GET", Target: "http://x/y", Throughput: 2800, Latency: Latency{P50: 5600 * time.Microsecond}, StatusCounts: map[int]int{}}
	run.CompareToFloor(floor, 300)
	f := run.Floor
	if f == nil || f.Fraction != 0.07 || f.P50Ratio != 14 || f.Throughput != 40000 || f.BodyBytes != 300 {
		t.Fatalf("Floor = %+v, want fraction 0.07, p50 ratio 14 of a 40000/s floor", f)
	}
	var out strings.Builder
	if err := run.Write(&out); err != nil {
		t.Fatal(err)
	}
	if want := "floor    40000.0 req/s, p50 400µs (300-byte JSON, same clients); this run 0.070 of its rate, p50 14.0× its\n"; !strings.Contains(out.String(), want) {
		t.Errorf("report lacks the floor line %q:\n%s", want, out.String())
	}

	if got := len(floorBody(1)); got != MinFloorBodySize {
		t.Errorf("a 1-byte floor body is %d bytes, want the smallest, %d", got, MinFloorBodySize)
	}

	zero := Result{Throughput: 10}
	zero.CompareToFloor(Result{}, 300)
	if zero.Floor.Fraction != 0 || zero.Floor.P50Ratio != 0 {
		t.Errorf("a floor that measured nothing gives %+v, want zero fractions, not Inf", zero.Floor)
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }
