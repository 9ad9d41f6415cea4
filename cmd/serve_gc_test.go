package cmd

import (
	"math"
	"runtime/debug"
	"testing"
)

// serve raises the collector's target and sets a soft memory limit, unless
// the operator set GOGC or GOMEMLIMIT, which Go applies itself.
func TestTuneGC(t *testing.T) {
	percent, limit := debug.SetGCPercent(100), debug.SetMemoryLimit(math.MaxInt64)
	t.Cleanup(func() { debug.SetGCPercent(percent); debug.SetMemoryLimit(limit) })
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }

	tuneGC(getenv)
	if got := debug.SetGCPercent(100); got != serveGCPercent {
		t.Fatalf("GC percent %d, want %d", got, serveGCPercent)
	}
	avail := availableMemory()
	if avail == 0 {
		t.Skip("no /proc/meminfo: no memory limit to check")
	}
	if got := debug.SetMemoryLimit(math.MaxInt64); got != int64(avail/serveMemoryShare) {
		t.Fatalf("memory limit %d, want %d (a quarter of %d)", got, avail/serveMemoryShare, avail)
	}

	env["GOGC"], env["GOMEMLIMIT"] = "150", "1GiB"
	tuneGC(getenv)
	if got := debug.SetGCPercent(100); got != 100 {
		t.Fatalf("GOGC set: GC percent changed to %d", got)
	}
	if got := debug.SetMemoryLimit(math.MaxInt64); got != math.MaxInt64 {
		t.Fatalf("GOMEMLIMIT set: memory limit changed to %d", got)
	}
}
