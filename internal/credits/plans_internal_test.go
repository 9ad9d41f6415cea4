package credits

import (
	"testing"

	"github.com/tollgatehq/tollgate/internal/testdb"
)

// TestBatchPlansProbeByKey: the batch statements probe rows by key even
// on tables without statistics (a generic plan that hash-joined against a
// sequential scan of every grant remainder once cost 3.6 ms a batch).
func TestBatchPlansProbeByKey(t *testing.T) {
	testdb.AssertProbes(t, map[string]string{"lock": lockSQL, "read": readSQL, "write": writeSQL})
}
