package cmd

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The repository stands on its own: someone who clones it has nothing
// beside it. These tests hold its documentation to that: links resolve
// inside it, nothing points outside it, and the README says what the
// project really needs and runs.

// repoRoot is the top of the repository, from this package's directory.
const repoRoot = ".."

// trackedFiles lists the repository's files, relative to its root: git's
// index when this is a checkout, else every file outside generated and
// installed directories.
func trackedFiles(t *testing.T) []string {
	t.Helper()
	out, err := exec.Command("git", "-C", repoRoot, "ls-files", "-z").Output()
	if err == nil && len(out) > 0 {
		var files []string
		for _, f := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
			if info, err := os.Lstat(filepath.Join(repoRoot, f)); err == nil && info.Mode().IsRegular() {
				files = append(files, f)
			}
		}
		return files
	}
	var files []string
	err = filepath.WalkDir(repoRoot, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		switch d.Name() {
		case ".git", "node_modules", "artifacts":
			return filepath.SkipDir
		}
		if d.Type().IsRegular() {
			rel, _ := filepath.Rel(repoRoot, p)
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func readRepo(t *testing.T, rel string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, rel))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

var (
	mdFence    = regexp.MustCompile("(?ms)^ *```.*?^ *```")
	mdCodeSpan = regexp.MustCompile("`[^`\n]*`")
	mdLink     = regexp.MustCompile(`\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	mdHeading  = regexp.MustCompile(`(?m)^#{1,6} +(.+?) *$`)
)

// mdLinks are the link targets of a Markdown text, code left out.
func mdLinks(src string) []string {
	src = mdCodeSpan.ReplaceAllString(mdFence.ReplaceAllString(src, ""), "")
	var out []string
	for _, m := range mdLink.FindAllStringSubmatch(src, -1) {
		out = append(out, m[1])
	}
	return out
}

// anchors are the fragment ids a code host gives a Markdown file's
// headings: lower case, punctuation dropped, spaces as hyphens.
func anchors(src string) map[string]bool {
	src = mdFence.ReplaceAllString(src, "")
	out := map[string]bool{}
	for _, m := range mdHeading.FindAllStringSubmatch(src, -1) {
		var b strings.Builder
		for _, r := range strings.ToLower(strings.ReplaceAll(m[1], "`", "")) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || ('a' <= r && r <= 'z') || ('0' <= r && r <= '9') || r > 127:
				b.WriteRune(r)
			}
		}
		out[b.String()] = true
	}
	return out
}

// Every relative link of every Markdown file names a file or directory of
// the repository, and a #fragment names a heading of its target; the
// README and the guides link nowhere outside the repository.
func TestLinksInMarkdownResolve(t *testing.T) {
	t.Parallel()
	checked := 0
	for _, f := range trackedFiles(t) {
		if !strings.HasSuffix(f, ".md") {
			continue
		}
		src := string(readRepo(t, f))
		standalone := f == "README.md" || strings.HasPrefix(f, "cmd/help/") || f == "internal/README.md"
		for _, target := range mdLinks(src) {
			checked++
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				if standalone {
					t.Errorf("%s links outside the repository: %s", f, target)
				}
				continue
			}
			file, frag, _ := strings.Cut(target, "#")
			dest := f
			if file != "" {
				dest = filepath.ToSlash(filepath.Join(filepath.Dir(f), file))
				info, err := os.Stat(filepath.Join(repoRoot, dest))
				if err != nil || strings.HasPrefix(dest, "../") {
					t.Errorf("%s: the link %s names nothing in the repository", f, target)
					continue
				}
				if info.IsDir() {
					continue
				}
			}
			if frag != "" && strings.HasSuffix(dest, ".md") && !anchors(string(readRepo(t, dest)))[frag] {
				t.Errorf("%s: the link %s names no heading of %s", f, target, dest)
			}
		}
	}
	if checked < 50 {
		t.Fatalf("checked only %d links", checked)
	}
}

// Every //go:embed pattern of the module's Go files matches a file.
func TestLinksOfGoEmbedResolve(t *testing.T) {
	t.Parallel()
	directive := regexp.MustCompile(`(?m)^\s*//go:embed\s+(.+)$`)
	checked := 0
	for _, f := range trackedFiles(t) {
		if !strings.HasSuffix(f, ".go") {
			continue
		}
		for _, m := range directive.FindAllStringSubmatch(string(readRepo(t, f)), -1) {
			for _, pattern := range strings.Fields(m[1]) {
				checked++
				pattern = strings.TrimPrefix(strings.Trim(pattern, "`\""), "all:")
				matches, err := filepath.Glob(filepath.Join(repoRoot, filepath.Dir(f), pattern))
				if err != nil || len(matches) == 0 {
					t.Errorf("%s: //go:embed %s matches nothing", f, pattern)
				}
			}
		}
	}
	if checked < 5 {
		t.Fatalf("checked only %d embed patterns", checked)
	}
}

// No file names the directory that sat beside the repository while it was
// being written; only CI's own script may know about it.
func TestLinksNameNothingBesideTheRepository(t *testing.T) {
	t.Parallel()
	needles := [][]byte{[]byte(".." + "/shared"), []byte("/work" + "/shared")}
	for _, f := range trackedFiles(t) {
		if strings.HasPrefix(f, ".ci/") {
			continue
		}
		b := readRepo(t, f)
		for _, n := range needles {
			if bytes.Contains(b, n) {
				t.Errorf("%s names %s", f, n)
			}
		}
	}
}

// The repository explains itself in its own words: no file, code comments
// included, cites a specification or design document from outside it.
func TestLinksToNoOutsideDocument(t *testing.T) {
	t.Parallel()
	names := [][]byte{[]byte("SPEC" + ".md"), []byte("DESIGN" + ".md")}
	for _, f := range trackedFiles(t) {
		b := readRepo(t, f)
		for _, name := range names {
			if bytes.Contains(b, name) {
				t.Errorf("%s cites %s: state the rule, or point at a guide under cmd/help", f, name)
			}
		}
	}
}

// The README is short, states the Go version go.mod asks for, and shows
// the two commands: starting the daemon, and the test suite exactly as CI
// runs it.
func TestReadmeStatesWhatCIRuns(t *testing.T) {
	t.Parallel()
	readme := string(readRepo(t, "README.md"))
	if n := strings.Count(readme, "\n"); n > 300 {
		t.Errorf("README.md has %d lines; keep it to 300 and move detail into a guide", n)
	}
	goVersion := regexp.MustCompile(`(?m)^go (\S+)$`).FindStringSubmatch(string(readRepo(t, "go.mod")))
	if goVersion == nil || !strings.Contains(readme, "Go "+goVersion[1]) {
		t.Errorf("README.md does not state the Go version of go.mod (%v)", goVersion)
	}
	var suite string
	for _, line := range strings.Split(string(readRepo(t, ".ci/run")), "\n") {
		if strings.HasPrefix(line, "go test ") && strings.HasSuffix(line, " ./...") && !strings.Contains(line, "-list") {
			suite = line
		}
	}
	if suite == "" {
		t.Fatal(".ci/run runs no `go test … ./...`")
	}
	for _, cmd := range []string{suite, "go run ./cmd/tollgate serve"} {
		if !strings.Contains(readme, "```sh\n"+cmd+"\n```") {
			t.Errorf("README.md does not show %q in a code block of its own", cmd)
		}
	}
}
