package arch_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/tollgatehq/tollgate/daemon"
	"github.com/tollgatehq/tollgate/internal/apperr"
)

// constants returns the string constants declared in the Go files of dir
// whose type or name matches keep.
func constants(t *testing.T, glob string, keep func(name string, spec *ast.ValueSpec) bool) map[string]string {
	t.Helper()
	files, err := filepath.Glob(glob)
	if err != nil || len(files) == 0 {
		t.Fatalf("no files for %s: %v", glob, err)
	}
	out := map[string]string{}
	for _, f := range files {
		file, err := parser.ParseFile(token.NewFileSet(), f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(file, func(n ast.Node) bool {
			spec, ok := n.(*ast.ValueSpec)
			if !ok {
				return true
			}
			for i, name := range spec.Names {
				if i >= len(spec.Values) || !keep(name.Name, spec) {
					continue
				}
				if lit, ok := spec.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
					v, _ := strconv.Unquote(lit.Value)
					out[name.Name] = v
				}
			}
			return true
		})
	}
	return out
}

// Every error code of internal/apperr has an HTTP status in the daemon's one
// table and a matching constant in client/, and the client has no code the
// daemon never sends.
func TestErrorCodesHaveStatusesAndClientConstants(t *testing.T) {
	t.Parallel()
	codes := constants(t, "../apperr/*.go", func(_ string, spec *ast.ValueSpec) bool {
		id, ok := spec.Type.(*ast.Ident)
		return ok && id.Name == "Code"
	})
	clientCodes := map[string]bool{}
	for _, v := range constants(t, "../../client/error.go", func(name string, _ *ast.ValueSpec) bool { return len(name) > 4 && name[:4] == "Code" }) {
		clientCodes[v] = true
	}
	if len(codes) < 15 {
		t.Fatalf("found only %d codes in internal/apperr", len(codes))
	}
	for name, code := range codes {
		if daemon.HTTPStatus(apperr.Code(code)) == 0 {
			t.Errorf("apperr.%s (%q) has no HTTP status in the daemon's table", name, code)
		}
		if !clientCodes[code] {
			t.Errorf("apperr.%s (%q) has no client constant", name, code)
		}
	}
	for code := range clientCodes {
		found := false
		for _, c := range codes {
			found = found || c == code
		}
		if !found {
			t.Errorf("client has code %q that internal/apperr does not", code)
		}
	}
}
