// Package help holds tollgate's user guides: Markdown files in this
// directory, embedded in the binary and shown by `tollgate help TOPIC`.
// The same files read well on a code host, so links between guides are
// relative. A guide's name is its file name without .md; its first "# "
// heading is its title and the paragraph under it its one-line summary, so
// a new file here is a new topic with no code to change.
package help

import (
	"embed"
	"io/fs"
	"slices"
	"strings"
)

//go:embed *.md
var files embed.FS

// Topic is one guide as `tollgate help` lists it.
type Topic struct {
	Name    string // the file name without .md: `tollgate help NAME`
	Title   string // the first "# " heading
	Summary string // the first paragraph after it, on one line
}

// first is listed before the others, which follow in name order: a
// newcomer reads it first.
const first = "quickstart"

// Topics lists every embedded guide, quickstart first, then by name.
func Topics() []Topic {
	names, _ := fs.Glob(files, "*.md")
	var out []Topic
	for _, f := range names {
		name := strings.TrimSuffix(f, ".md")
		src, _ := Guide(name)
		title, summary := heading(src)
		out = append(out, Topic{Name: name, Title: title, Summary: summary})
	}
	slices.SortFunc(out, func(a, b Topic) int {
		switch {
		case a.Name == first:
			return -1
		case b.Name == first:
			return 1
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out
}

// Guide returns the Markdown of the guide called name.
func Guide(name string) (string, bool) {
	if name == "" || strings.ContainsAny(name, "/\\.") {
		return "", false
	}
	b, err := files.ReadFile(name + ".md")
	if err != nil {
		return "", false
	}
	return string(b), true
}

// heading returns a guide's title (its first "# " heading) and summary
// (the paragraph after it, joined into one line).
func heading(src string) (title, summary string) {
	lines := strings.Split(src, "\n")
	i := 0
	for ; i < len(lines); i++ {
		if t, ok := strings.CutPrefix(lines[i], "# "); ok {
			title = strings.TrimSpace(t)
			break
		}
	}
	for i++; i < len(lines) && strings.TrimSpace(lines[i]) == ""; i++ {
	}
	var para []string
	for ; i < len(lines) && strings.TrimSpace(lines[i]) != ""; i++ {
		para = append(para, strings.TrimSpace(lines[i]))
	}
	return title, inline(strings.Join(para, " "))
}
