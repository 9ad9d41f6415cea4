package cmd

import (
	"bufio"
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/testdb"
)

// BenchmarkServeStartup measures the built binary: time from exec to
// /readyz answering 200 on an existing, migrated database, and resident
// memory after a second idle.
//
//	go test ./cmd -run '^$' -bench ServeStartup -benchtime 5x
func BenchmarkServeStartup(b *testing.B) {
	bin := filepath.Join(b.TempDir(), "tollgate")
	if out, err := exec.Command("go", "build", "-o", bin, "./tollgate").CombinedOutput(); err != nil {
		b.Fatalf("build: %v\n%s", err, out)
	}
	url := testdb.New(b)
	db, err := store.Open(context.Background(), url)
	if err != nil {
		b.Fatal(err)
	}
	if err := store.Migrate(context.Background(), db.DB.DB); err != nil {
		b.Fatal(err)
	}
	db.Close()
	var total time.Duration
	var rssKB int
	b.ResetTimer()
	for range b.N {
		addr := freePort(b)
		cmd := exec.Command(bin, "serve", "--database-url", url, "--listen", addr, "--config", filepath.Join(b.TempDir(), "c.yaml"))
		start := time.Now()
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		for {
			resp, err := http.Get("http://" + addr + "/readyz")
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode == 200 {
					break
				}
			}
			if time.Since(start) > 30*time.Second {
				b.Fatal("serve did not become ready")
			}
			time.Sleep(time.Millisecond)
		}
		total += time.Since(start)
		b.StopTimer()
		time.Sleep(time.Second) // idle, by definition of the figure
		rssKB = vmRSS(b, cmd.Process.Pid)
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
		b.StartTimer()
	}
	b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "ms-to-ready")
	b.ReportMetric(float64(rssKB)/1024, "idle-rss-MiB")
}

func vmRSS(b *testing.B, pid int) int {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, _ := strconv.Atoi(strings.Fields(rest)[0])
			return kb
		}
	}
	return 0
}
