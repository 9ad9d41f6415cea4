package arch_test

import (
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const module = "github.com/tollgatehq/tollgate"

type pkg struct {
	ImportPath string
	Dir        string
	GoFiles    []string
	Imports    []string
	Deps       []string
}

// packages lists the module's packages with their direct imports and all
// dependencies (non-test code only).
func packages(t *testing.T) []pkg {
	t.Helper()
	out, err := exec.Command("go", "list", "-json", module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []pkg
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p pkg
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	if len(pkgs) < 10 {
		t.Fatalf("go list found only %d packages", len(pkgs))
	}
	return pkgs
}

func TestLayering(t *testing.T) {
	t.Parallel()
	for _, p := range packages(t) {
		rel := strings.TrimPrefix(p.ImportPath, module)
		switch {
		case strings.HasSuffix(rel, "test"):
			// Test-support packages (like net/http/httptest) serve tests only.
		case strings.HasPrefix(rel, "/internal/"):
			// Domain and storage: no handlers, no CLI, no UI. Outbound HTTP
			// clients (the SSRF-safe client, metadata fetches) are fine.
			for _, f := range p.GoFiles {
				src, err := os.ReadFile(filepath.Join(p.Dir, f))
				if err != nil {
					t.Fatal(err)
				}
				for _, h := range []string{"http.ResponseWriter", "http.Handler", "http.ServeMux"} {
					if strings.Contains(string(src), h) {
						t.Errorf("%s/%s uses %s: HTTP handlers belong in daemon/", p.ImportPath, f, h)
					}
				}
			}
			for _, imp := range p.Imports {
				for _, banned := range []string{"github.com/spf13/cobra", "github.com/spf13/viper", "github.com/charmbracelet/",
					"github.com/gorilla/handlers", "github.com/prometheus/client_golang/prometheus/promhttp", "net/http/httptest"} {
					if strings.HasPrefix(imp, banned) {
						t.Errorf("%s imports %s", p.ImportPath, imp)
					}
				}
				if strings.HasPrefix(imp, module+"/daemon") || strings.HasPrefix(imp, module+"/cmd") || strings.HasPrefix(imp, module+"/tui") {
					t.Errorf("%s imports %s", p.ImportPath, imp)
				}
			}
		case strings.HasPrefix(rel, "/client"):
			for _, dep := range p.Deps {
				if strings.HasPrefix(dep, module+"/") && !strings.HasPrefix(dep, module+"/client") {
					t.Errorf("%s depends on %s: client/ is public and stands alone", p.ImportPath, dep)
				}
			}
		case strings.HasPrefix(rel, "/tui"):
			for _, dep := range p.Deps {
				if strings.HasPrefix(dep, module+"/") && !strings.HasPrefix(dep, module+"/client") && !strings.HasPrefix(dep, module+"/tui") {
					t.Errorf("%s depends on %s: the TUI talks to the daemon only through client/", p.ImportPath, dep)
				}
			}
		}
	}
}
