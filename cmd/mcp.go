package cmd

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tollgatehq/tollgate/daemon"
)

func newMCPCmd(f *Factory) *cobra.Command {
	c := &cobra.Command{
		Use:   "mcp",
		Short: "The tool server for AI clients at /api/mcp",
	}
	c.AddCommand(newMCPToolsCmd(f))
	return c
}

func newMCPToolsCmd(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "tools [NAME]",
		Short: "Print the tool server's tools with their schemas",
		Long: `Print the tools the daemon serves at /api/mcp, from the registry the daemon
itself uses: each tool's scope, REST counterpart, annotations and input
schema. With --json, the tools as tools/list answers them (plus "rest" and
"scope"), including input and output schemas: an array, or with NAME the one
tool's object.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			tools := daemon.Tools()
			if len(args) == 1 {
				i := slices.IndexFunc(tools, func(t daemon.ToolDescription) bool { return t.Name == args[0] })
				if i < 0 {
					return exitWith(ExitUsage, fmt.Errorf("no tool %q; `tollgate mcp tools` lists them", args[0]))
				}
				if f.JSON() {
					return writeJSONTo(f.IO.Out, tools[i]) // one object, as NAME asked
				}
				tools = tools[i : i+1]
			}
			if f.JSON() {
				return writeJSONTo(f.IO.Out, tools)
			}
			for i, t := range tools {
				if i > 0 {
					fmt.Fprintln(f.IO.Out)
				}
				printTool(f, t)
			}
			return nil
		},
	}
}

// printTool writes one tool for people: what it does, and its arguments.
func printTool(f *Factory, t daemon.ToolDescription) {
	out := f.IO.Out
	kind := "write"
	if t.Annotations.ReadOnlyHint {
		kind = "read-only"
	}
	fmt.Fprintf(out, "%s — %s (%s, scope %s, like %s)\n", t.Name, t.Title, kind, t.Scope, t.REST)
	fmt.Fprintf(out, "  %s\n", t.Description)
	var schema struct {
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
	}
	raw, _ := json.Marshal(t.InputSchema)
	_ = json.Unmarshal(raw, &schema)
	names := make([]string, 0, len(schema.Properties))
	for n := range schema.Properties {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		var p struct {
			Type        any    `json:"type"`
			AnyOf       []any  `json:"anyOf"`
			Format      string `json:"format"`
			Enum        []any  `json:"enum"`
			MaxLength   *int   `json:"maxLength"`
			Maximum     *int   `json:"maximum"`
			Description string `json:"description"`
		}
		_ = json.Unmarshal(schema.Properties[n], &p)
		typ := fmt.Sprint(p.Type)
		switch {
		case p.AnyOf != nil:
			typ = "amount"
		case p.Format != "":
			typ = p.Format
		case p.Enum != nil:
			typ = strings.ReplaceAll(fmt.Sprint(p.Enum), " ", "|")
		}
		switch {
		case p.MaxLength != nil:
			typ += fmt.Sprintf(", ≤%d chars", *p.MaxLength)
		case p.Maximum != nil:
			typ += fmt.Sprintf(", ≤%d", *p.Maximum)
		}
		req := ""
		for _, r := range schema.Required {
			if r == n {
				req = ", required"
			}
		}
		fmt.Fprintf(out, "  • %s (%s%s) %s\n", n, typ, req, strings.TrimSpace(p.Description))
	}
}
