package pgcluster

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// pgLibGlob is where distribution packages (Debian, Ubuntu) put the server
// binaries, off PATH. A variable so tests can point it at a fake tree.
var pgLibGlob = "/usr/lib/postgresql/*/bin"

// requiredBinaries are the programs Start runs; postgres is found by pg_ctl
// next to itself, so all three must share a directory.
var requiredBinaries = []string{"initdb", "pg_ctl", "postgres"}

// ErrNoBinaries is returned (wrapped) when no PostgreSQL installation is found.
var ErrNoBinaries = errors.New("PostgreSQL binaries not found (need initdb, pg_ctl and postgres on PATH or under /usr/lib/postgresql/*/bin): install PostgreSQL (apt-get install postgresql) or pass --database-url")

// FindBinaries returns the directory holding initdb, pg_ctl and postgres:
// PATH first (so an operator can choose a version), else the highest
// version under /usr/lib/postgresql/*/bin.
func FindBinaries() (binDir string, err error) {
	if p, err := exec.LookPath("pg_ctl"); err == nil {
		// Resolve symlinks (e.g. /usr/local/bin/pg_ctl -> /usr/lib/...)
		// so the three programs come from one installation.
		for _, cand := range candidates(p) {
			if hasAll(cand) {
				return cand, nil
			}
		}
	}
	dirs, _ := filepath.Glob(pgLibGlob)
	sort.Slice(dirs, func(i, j int) bool { return versionLess(dirs[j], dirs[i]) })
	for _, d := range dirs {
		if hasAll(d) {
			return d, nil
		}
	}
	return "", ErrNoBinaries
}

func candidates(pgctl string) []string {
	out := []string{}
	if real, err := filepath.EvalSymlinks(pgctl); err == nil {
		out = append(out, filepath.Dir(real))
	}
	return append(out, filepath.Dir(pgctl))
}

func hasAll(dir string) bool {
	for _, name := range requiredBinaries {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
			return false
		}
	}
	return true
}

// versionLess compares .../<version>/bin paths numerically so 15 beats 9.6.
func versionLess(a, b string) bool {
	va := strings.Split(filepath.Base(filepath.Dir(a)), ".")
	vb := strings.Split(filepath.Base(filepath.Dir(b)), ".")
	for i := 0; i < len(va) && i < len(vb); i++ {
		na, ea := strconv.Atoi(va[i])
		nb, eb := strconv.Atoi(vb[i])
		if ea != nil || eb != nil {
			if va[i] != vb[i] {
				return va[i] < vb[i]
			}
			continue
		}
		if na != nb {
			return na < nb
		}
	}
	return len(va) < len(vb)
}
