package bench

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"
)

// DefaultFloorBodySize is the size of the floor's answer: about that of a
// GET of one SP Resource Manager instance.
const DefaultFloorBodySize = 300

// FloorHandler answers every request, whatever its method and path, with
// 200 and the same JSON object of size bytes (at least [MinFloorBodySize]),
// read from memory.
// Served with Steward's own http.Server settings and driven by the same
// client, it is the floor: what this machine's HTTP stack does when the
// server does no work. A run's figures divided by the floor's, both taken
// the same day, compare across days and machines better than either alone.
//
// It reads the request body to the end, as a handler decoding JSON would,
// so a POST leaves its connection reusable.
func FloorHandler(size int) http.Handler {
	body := floorBody(size)
	length := strconv.Itoa(len(body))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		h := w.Header()
		h["Content-Type"] = []string{"application/json"}
		h["Content-Length"] = []string{length}
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(body)
	})
}

// MinFloorBodySize is the size of the floor's smallest answer,
// {"id":"floor","padding":""}.
const MinFloorBodySize = len(floorHead + floorTail)

const floorHead, floorTail = `{"id":"floor","padding":"`, `"}`

// floorBody returns {"id":"floor","padding":"xxx…"} of exactly size bytes,
// or of MinFloorBodySize when size is smaller.
func floorBody(size int) []byte {
	head, tail := floorHead, floorTail
	pad := max(size-len(head)-len(tail), 0)
	b := make([]byte, 0, len(head)+pad+len(tail))
	b = append(b, head...)
	b = append(b, bytes.Repeat([]byte{'x'}, pad)...)
	return append(b, tail...)
}

// Floor is the floor's run beside another run's figures: Fraction is the
// run's throughput over the floor's, and P50Ratio the run's median latency
// over the floor's, so 0.07 and 14× say the run does 7% of what the bare
// stack does and its typical request takes 14 times as long.
type Floor struct {
	// BodyBytes is the size of the floor's answer.
	BodyBytes int `json:"body_bytes"`
	// Throughput and P50 are the floor's own figures.
	Throughput float64       `json:"throughput_rps"`
	P50        time.Duration `json:"p50_ns"`
	// Fraction is the run's throughput divided by Throughput.
	Fraction float64 `json:"fraction"`
	// P50Ratio is the run's p50 divided by P50.
	P50Ratio float64 `json:"p50_ratio"`
}

// CompareToFloor records in r how it stands against floor, a closed-loop
// run of [FloorHandler] with r's number of clients.
func (r *Result) CompareToFloor(floor Result, bodyBytes int) {
	f := &Floor{BodyBytes: bodyBytes, Throughput: floor.Throughput, P50: floor.Latency.P50}
	if f.Throughput > 0 {
		f.Fraction = r.Throughput / f.Throughput
	}
	if f.P50 > 0 {
		f.P50Ratio = float64(r.Latency.P50) / float64(f.P50)
	}
	r.Floor = f
}

// String is the floor line of [Result.Write].
func (f *Floor) String() string {
	return fmt.Sprintf("%.1f req/s, p50 %s (%d-byte JSON, same clients); this run %.3f of its rate, p50 %.1f× its",
		f.Throughput, formatLatency(f.P50), f.BodyBytes, f.Fraction, f.P50Ratio)
}
