package help

import (
	"path"
	"regexp"
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// Plain renders a guide for a terminal as plain text: headings underlined,
// code blocks indented without their fences, tables aligned (or, when too
// wide for that, one row per paragraph), and links written out as the
// command or file they point at. Backticks stay: they mark what to type.
func Plain(src string) string {
	var b strings.Builder
	lines := strings.Split(strings.TrimRight(src, "\n"), "\n")
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		trimmed := strings.TrimLeft(line, " ")
		switch {
		case strings.HasPrefix(trimmed, "```"):
			indent := strings.Repeat(" ", len(line)-len(trimmed)+4)
			for i++; i < len(lines) && !strings.HasPrefix(strings.TrimLeft(lines[i], " "), "```"); i++ {
				code := strings.TrimPrefix(lines[i], indent[4:])
				if code == "" {
					b.WriteString("\n")
					continue
				}
				b.WriteString(indent + code + "\n")
			}
		case strings.HasPrefix(line, "#"):
			level := len(line) - len(strings.TrimLeft(line, "#"))
			text := inline(strings.TrimSpace(line[level:]))
			b.WriteString(text + "\n")
			switch level {
			case 1:
				b.WriteString(strings.Repeat("=", ansi.StringWidth(text)) + "\n")
			case 2:
				b.WriteString(strings.Repeat("-", ansi.StringWidth(text)) + "\n")
			}
		case strings.HasPrefix(line, "|"):
			var rows []string
			for ; i < len(lines) && strings.HasPrefix(lines[i], "|"); i++ {
				rows = append(rows, lines[i])
			}
			i--
			b.WriteString(table(rows))
		default:
			b.WriteString(inline(line) + "\n")
		}
	}
	return b.String()
}

// tableWidth is the widest an aligned table may be; wider ones are written
// a row at a time.
const tableWidth = 100

// table renders a Markdown table's rows.
func table(rows []string) string {
	var cells [][]string
	for _, r := range rows {
		r = strings.Trim(strings.TrimSpace(r), "|")
		if strings.Trim(r, "|-: ") == "" {
			continue // the header's separator row
		}
		parts := strings.Split(strings.ReplaceAll(r, `\|`, "\x00"), "|")
		row := make([]string, len(parts))
		for j, p := range parts {
			row[j] = inline(strings.ReplaceAll(strings.TrimSpace(p), "\x00", "|"))
		}
		cells = append(cells, row)
	}
	var widths []int
	for _, row := range cells {
		for j, c := range row {
			if j == len(widths) {
				widths = append(widths, 0)
			}
			widths[j] = max(widths[j], ansi.StringWidth(c))
		}
	}
	total := 0
	for _, w := range widths {
		total += w + 2
	}
	var b strings.Builder
	if total > tableWidth {
		// Too wide to align: each row becomes its first cell with the
		// others indented below it, labelled by their column's header
		// when there are several.
		for _, row := range cells[1:] {
			b.WriteString("  " + row[0] + "\n")
			for j, c := range row[1:] {
				switch {
				case c == "":
				case len(row) == 2:
					b.WriteString("      " + c + "\n")
				case j+1 < len(cells[0]):
					b.WriteString("      " + cells[0][j+1] + ": " + c + "\n")
				}
			}
		}
		return b.String()
	}
	for k, row := range cells {
		line := ""
		for j, c := range row {
			line += c
			if j < len(row)-1 {
				line += strings.Repeat(" ", widths[j]-ansi.StringWidth(c)+2)
			}
		}
		b.WriteString("  " + strings.TrimRight(line, " ") + "\n")
		if k == 0 {
			b.WriteString("  " + strings.Repeat("-", total-2) + "\n")
		}
	}
	return b.String()
}

var (
	link = regexp.MustCompile(`\[([^\]]+)\]\(([^)\s]+)\)`)
	bold = regexp.MustCompile(`\*\*([^*]+)\*\*`)
)

// inline rewrites a line's emphasis and links for plain text.
func inline(s string) string {
	s = bold.ReplaceAllString(s, "$1")
	return link.ReplaceAllStringFunc(s, func(m string) string {
		sub := link.FindStringSubmatch(m)
		text, target := sub[1], sub[2]
		if file, _, _ := strings.Cut(target, "#"); file == text+".md" {
			return "`tollgate help " + text + "`"
		}
		return text + " (" + where(target) + ")"
	})
}

// where says in plain text what a link points at: another guide's help
// command, a file of the repository, or an address.
func where(target string) string {
	file, _, _ := strings.Cut(target, "#")
	switch {
	case strings.Contains(target, "://"):
		return target
	case file == "":
		return "in this guide"
	case !strings.Contains(file, "/") && strings.HasSuffix(file, ".md"):
		return "`tollgate help " + strings.TrimSuffix(file, ".md") + "`"
	}
	return "the repository's " + path.Join("cmd/help", file)
}
