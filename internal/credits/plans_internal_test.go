package credits

import (
	"strings"
	"testing"

	"github.com/tollgatehq/tollgate/internal/testdb"
)

// TestBatchPlansProbeByKey: the batch statements probe rows by key even
// on tables without statistics (a generic plan that hash-joined against a
// sequential scan of every grant remainder once cost 3.6 ms a batch).
func TestBatchPlansProbeByKey(t *testing.T) {
	testdb.AssertProbes(t, map[string]string{"lock": lockSQL, "read": readSQL, "write": writeLedgerSQL + ` SELECT count(*) FROM op`})
}

// The other statements of a batch's transaction, which runs on generic
// plans (store.InTxGenericPlans), reach customers and accounts through an
// index, never by a scan. (On a table not yet analysed, the customers
// probe may take the tenant-led index, as a custom plan would; the
// daemon's table-statistics job ends that within seconds of 500 rows.)
// The write's events find their endpoints by the merchant, as
// events.EmitMany does: a merchant has a handful.
func TestBatchTxPlansUseIndexes(t *testing.T) {
	testdb.AssertIndexed(t, map[string]string{"lookup": lookupSQL, "create_accounts": createSQL,
		"write_events": "WITH " + strings.NewReplacer("$40", "$7", "$41", "$1", "$42", "$2", "$43", "$3", "$44", "$4", "$45", "$5", "$46", "$6").Replace(writeEventsSQL) +
			" SELECT count(*) FROM d"})
}
