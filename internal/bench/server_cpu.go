package bench

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"time"
)

// ServerCPU is the CPU time a server process used during a run's measured
// phase (Config.ServerPID), read from Linux's /proc. Two runs on one day
// compare by it even when the machine's speed moves: it counts the work a
// request costs, not the time it waited for a core.
type ServerCPU struct {
	PID int `json:"pid"`
	// Seconds is user and system CPU time over the measured phase.
	Seconds float64 `json:"seconds"`
	// Cores is Seconds per second of the phase.
	Cores float64 `json:"cores"`
	// PerRequest is Seconds over the requests of the phase.
	PerRequest time.Duration `json:"per_request_ns"`
}

func (c ServerCPU) String() string {
	return fmt.Sprintf("pid %d: %.2f cores, %s of CPU a request", c.PID, c.Cores, formatLatency(c.PerRequest))
}

// clockTicks is USER_HZ, the unit of /proc/PID/stat's times: 100 on every
// Linux architecture Go runs on (sysconf(_SC_CLK_TCK) needs cgo).
const clockTicks = 100

// processCPU returns the user and system CPU time pid has used so far.
func processCPU(pid int) (time.Duration, error) {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, fmt.Errorf("bench: server CPU: %w", err)
	}
	// The command (field 2) is in parentheses and may hold spaces: count
	// the fields after its closing one. utime and stime are fields 14, 15.
	end := bytes.LastIndexByte(stat, ')')
	if end < 0 {
		return 0, fmt.Errorf("bench: server CPU: unexpected /proc/%d/stat", pid)
	}
	fields := bytes.Fields(stat[end+1:])
	if len(fields) < 13 {
		return 0, fmt.Errorf("bench: server CPU: unexpected /proc/%d/stat", pid)
	}
	var ticks int64
	for _, f := range fields[11:13] {
		n, err := strconv.ParseInt(string(f), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("bench: server CPU: /proc/%d/stat: %w", pid, err)
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / clockTicks, nil
}
