package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"syscall"
	"time"
	"unicode"

	"github.com/spf13/cobra"

	"github.com/tollgatehq/tollgate/client"
	"github.com/tollgatehq/tollgate/internal/money"
)

// This file holds what the client commands share: tables, USDC formatting,
// JSON passthrough and list paging.

func bold(s string) string  { return "\x1b[1m" + s + "\x1b[0m" }
func green(s string) string { return "\x1b[32m" + s + "\x1b[0m" }
func red(s string) string   { return "\x1b[31m" + s + "\x1b[0m" }

// clean makes API text safe for one table cell: control characters (which
// could break the layout or drive the terminal) become spaces.
func clean(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
}

// printFields prints "Label:  value" lines under a title marked as a
// success, for create output.
func printFields(streams *IO, title string, fields [][2]string) error {
	return printOutcome(streams, true, title, fields)
}

// printOutcome is printFields for a result that may be a success (a green ✓
// on a terminal) or a refusal (a red ✗), such as an entitlement check.
func printOutcome(streams *IO, ok bool, title string, fields [][2]string) error {
	if streams.Color() {
		mark := green("✓")
		if !ok {
			mark = red("✗")
		}
		title = mark + " " + title
	}
	if _, err := fmt.Fprintln(streams.Out, title); err != nil {
		return err
	}
	t := newTablePrinter(streams)
	for _, f := range fields {
		if f[1] != "" {
			t.row("  "+f[0]+":", f[1])
		}
	}
	return t.print()
}

// usdc formats a wire amount (base units) for people: "9000000" → "9.00
// USDC". A value that is not an amount is shown as sent.
func usdc(base string) string {
	digits, neg := strings.CutPrefix(base, "-")
	a, err := money.Parse(digits)
	if err != nil {
		return base
	}
	if neg {
		a = -a
	}
	return a.USDC() + " USDC"
}

// whenShort formats an API timestamp for a list table, to the minute (get
// and --json have the seconds); a missing one is blank.
func whenShort(t *time.Time) string {
	if t == nil || t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02 15:04")
}

// when formats an API timestamp for details; a missing one is blank.
func when(t *time.Time) string {
	if t == nil || t.IsZero() {
		return ""
	}
	return fmtTime(*t)
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// printRaw writes JSON exactly as the API sent it, newline-terminated.
func printRaw(w io.Writer, raw json.RawMessage) error {
	if !bytes.HasSuffix(raw, []byte("\n")) {
		raw = append(raw[:len(raw):len(raw)], '\n')
	}
	_, err := w.Write(raw)
	return err
}

// explain adds a hint to errors people commonly hit.
func explain(err error) error {
	if errors.Is(err, syscall.ECONNREFUSED) {
		return fmt.Errorf("%w\nis the daemon running? Start it with `tollgate serve`, or pass --api-url", err)
	}
	return err
}

// listOptions are the flags every list command shares.
type listOptions struct {
	Limit  int
	Before string
	All    bool
}

func addListFlags(cmd *cobra.Command, o *listOptions) {
	fl := cmd.Flags()
	fl.IntVar(&o.Limit, "limit", 0, "objects per request, 1 to 100 (default 25, or 100 with --all)")
	fl.StringVar(&o.Before, "before", "", "start after this cursor (a previous page's next_cursor)")
	fl.BoolVar(&o.All, "all", false, "fetch every page")
}

func (o listOptions) params() (client.ListParams, error) {
	if o.Limit < 0 || o.Limit > 100 {
		return client.ListParams{}, usageError("--limit must be between 1 and 100, got %d", o.Limit)
	}
	p := client.ListParams{Limit: o.Limit, Before: o.Before}
	if o.All && p.Limit == 0 {
		p.Limit = 100 // fewest requests
	}
	return p, nil
}

// listing says how one list command fetches and shows its objects.
type listing[T any] struct {
	plural string // "invoices"
	fetch  func(*client.Client) client.ListFunc[T]
	raw    func(T) json.RawMessage
	header []string
	row    func(T) []string
	right  []int // right-aligned columns
	// How the table gives way on a narrow terminal: the columns whose ids
	// are elided in the middle, whose text is cut, and those dropped,
	// least useful first.
	elide, cut, drop []int
}

// runList prints one page (or with --all every page) as a table, or with
// --json as the API's list envelope.
func runList[T any](ctx context.Context, cmd *cobra.Command, f *Factory, o listOptions, l listing[T]) error {
	if cmd.Flags().Changed("limit") && o.Limit == 0 {
		return usageError("--limit must be between 1 and 100, got 0")
	}
	p, err := o.params()
	if err != nil {
		return err
	}
	c, err := f.Client()
	if err != nil {
		return err
	}
	var items []T
	var last *client.List[T]
	if o.All {
		for page, err := range client.Pages(ctx, l.fetch(c), p) {
			if err != nil {
				return explain(err)
			}
			items = append(items, page.Data...)
		}
	} else {
		if last, err = l.fetch(c)(ctx, p); err != nil {
			return explain(err)
		}
		items = last.Data
	}
	if f.JSON() {
		if last != nil {
			return printRaw(f.IO.Out, last.Raw)
		}
		return printAllJSON(f.IO.Out, items, l.raw)
	}
	if len(items) == 0 {
		fmt.Fprintf(f.IO.Err, "No %s.\n", l.plural)
		return nil
	}
	t := newTablePrinter(f.IO, l.header...).elide(l.elide...).cut(l.cut...).drop(l.drop...)
	for _, i := range l.right {
		t.alignRight(i)
	}
	for _, item := range items {
		t.row(l.row(item)...)
	}
	if err := t.print(); err != nil {
		return err
	}
	if last != nil && last.HasMore && f.IO.ErrIsTerminal {
		fmt.Fprintf(f.IO.Err, "More %s: %s --before %s (or --all)\n", l.plural, cmd.CommandPath(), last.NextCursor)
	}
	return nil
}

// printAllJSON prints every page's objects as one list envelope, each object
// exactly as the API sent it.
func printAllJSON[T any](w io.Writer, items []T, raw func(T) json.RawMessage) error {
	var b bytes.Buffer
	b.WriteString(`{"object":"list","data":[`)
	for i, item := range items {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(raw(item))
	}
	b.WriteString("],\"has_more\":false,\"next_cursor\":null}\n")
	_, err := w.Write(b.Bytes())
	return err
}

// newListCmd is `NOUN list` for a noun whose list takes only the common list
// flags: newest first, --all to follow the cursor, --json for the raw objects.
func newListCmd[T any](f *Factory, plural string, l listing[T]) *cobra.Command {
	var o listOptions
	noun := strings.TrimSuffix(plural, "s")
	cmd := &cobra.Command{
		Use:               "list",
		Short:             "List " + plural + ", newest first",
		Example:           "  tollgate " + noun + " list --all --json",
		Args:              cobra.NoArgs,
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runList(cmd.Context(), cmd, f, o, l)
		},
	}
	addListFlags(cmd, &o)
	noFileCompletion(cmd, "limit", "before")
	return cmd
}
