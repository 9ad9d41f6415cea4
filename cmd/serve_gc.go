package cmd

import (
	"bufio"
	"bytes"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
)

// serveGCPercent is the heap growth between collections serve runs with
// (Go's default is 100). The daemon's live heap is small (tens of MiB) and
// every request allocates, so at 100 the collector ran several times a
// second under load and took about a fifth of the daemon's CPU (tollgate
// help operations, "Memory").
const serveGCPercent = 400

// serveMemoryShare: a quarter of the memory available to the process (its
// cgroup's limit, else the machine's) is the soft memory limit, so that a
// heap larger than expected makes the collector run sooner rather than the
// process grow to five times its live heap.
const serveMemoryShare = 4

// tuneGC sets serve's collector: GOGC and GOMEMLIMIT, when the operator
// sets them, are Go's own and left as they are.
func tuneGC(getenv func(string) string) {
	if getenv("GOGC") == "" {
		debug.SetGCPercent(serveGCPercent)
	}
	if getenv("GOMEMLIMIT") == "" {
		if avail := availableMemory(); avail > 0 {
			debug.SetMemoryLimit(int64(avail / serveMemoryShare))
		}
	}
}

// availableMemory is the memory the process may use: its cgroup's limit
// (v2, then v1) when it has one below the machine's RAM, else the RAM; 0
// when neither can be read (a system without /proc).
func availableMemory() uint64 {
	ram := memTotal()
	for _, f := range []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		if n, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64); err == nil && n > 0 && (ram == 0 || n < ram) {
			return n
		}
	}
	return ram
}

// memTotal is the machine's RAM from /proc/meminfo, 0 if unknown.
func memTotal() uint64 {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:"); ok {
			kb, err := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err != nil {
				return 0
			}
			return kb << 10
		}
	}
	return 0
}
