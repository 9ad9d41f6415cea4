package events

import (
	"testing"

	"github.com/tollgatehq/tollgate/internal/testdb"
)

func TestMain(m *testing.M) { testdb.Main(m) }

// EmitMany runs in the credit batches' transactions, on its generic plan:
// it finds the merchant's endpoints through an index, never by a scan.
func TestEmitManyPlanUsesIndexes(t *testing.T) {
	t.Parallel()
	testdb.AssertIndexed(t, map[string]string{"emit": emitManySQL})
}
