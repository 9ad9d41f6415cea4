package migrations_test

import (
	"context"
	"sort"
	"strings"
	"testing"

	"github.com/tollgatehq/tollgate/internal/testdb"
)

func TestMain(m *testing.M) { testdb.Main(m) }

type key struct {
	Table   string `db:"tbl"`
	Kind    string `db:"kind"` // p, u (unique index), f
	Name    string `db:"name"`
	Cols    string `db:"cols"`
	RefTbl  string `db:"ref_tbl"`
	RefCols string `db:"ref_cols"`
}

// keysSQL lists the primary keys, unique indexes (constraints or not) and
// foreign keys of every table with a merchant_id column, with their
// columns in order.
const keysSQL = `
WITH mt AS (
	SELECT c.oid, c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
	WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p') AND NOT c.relispartition
		AND EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = 'merchant_id' AND NOT a.attisdropped)
)
SELECT mt.relname AS tbl, CASE WHEN x.indisprimary THEN 'p' ELSE 'u' END AS kind, i.relname AS name,
	coalesce((SELECT string_agg(coalesce(a.attname, '(expr)'), ',' ORDER BY k.ord) FROM unnest(x.indkey::int2[]) WITH ORDINALITY k(attnum, ord)
		LEFT JOIN pg_attribute a ON a.attrelid = mt.oid AND a.attnum = k.attnum), '') AS cols,
	'' AS ref_tbl, '' AS ref_cols
FROM mt JOIN pg_index x ON x.indrelid = mt.oid AND x.indisunique JOIN pg_class i ON i.oid = x.indexrelid
UNION ALL
SELECT mt.relname, 'f', con.conname,
	(SELECT string_agg(a.attname, ',' ORDER BY k.ord) FROM unnest(con.conkey) WITH ORDINALITY k(attnum, ord)
		JOIN pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.attnum),
	con.confrelid::regclass::text,
	(SELECT string_agg(a.attname, ',' ORDER BY k.ord) FROM unnest(con.confkey) WITH ORDINALITY k(attnum, ord)
		JOIN pg_attribute a ON a.attrelid = con.confrelid AND a.attnum = k.attnum)
FROM mt JOIN pg_constraint con ON con.conrelid = mt.oid AND con.contype = 'f'
UNION ALL
SELECT mt.relname, 'p', '(none)', '', '', '' FROM mt
WHERE NOT EXISTS (SELECT 1 FROM pg_index x WHERE x.indrelid = mt.oid AND x.indisprimary)
ORDER BY 1, 2, 3`

// TestKeysLeadWithMerchant holds the migrated schema to what spreading
// merchant tables over nodes by merchant_id needs: each has a primary key,
// and its primary key, unique indexes and foreign keys to other merchant
// tables lead with merchant_id (on both sides); a global table refers to no
// merchant table.
func TestKeysLeadWithMerchant(t *testing.T) {
	db := testdb.Open(t)
	global := testdb.GlobalTables()
	var keys []key
	if err := db.SelectContext(context.Background(), &keys, keysSQL); err != nil {
		t.Fatal(err)
	}
	merchantTables := map[string]bool{}
	for _, k := range keys {
		merchantTables[k.Table] = true
	}
	if len(merchantTables) < 20 {
		t.Fatalf("found only %d tables with a merchant_id: is the query wrong?", len(merchantTables))
	}
	var bad []string
	for _, k := range keys {
		leads := strings.HasPrefix(k.Cols+",", "merchant_id,")
		distributedRef := merchantTables[k.RefTbl] && global[k.RefTbl] == ""
		switch {
		case global[k.Table] != "":
			if k.Kind == "f" && distributedRef {
				bad = append(bad, k.Table+": global table refers to distributed "+k.RefTbl+" ("+k.Name+")")
			}
		case k.Name == "(none)":
			bad = append(bad, k.Table+": no primary key")
		case k.Kind == "f" && !distributedRef:
			// a foreign key to a global table (merchants, a reference table)
		case !leads || (k.Kind == "f" && !strings.HasPrefix(k.RefCols+",", "merchant_id,")):
			bad = append(bad, k.Table+": "+k.Name+" ("+k.Cols+") does not lead with merchant_id")
		}
	}
	for table := range global {
		if !merchantTables[table] {
			bad = append(bad, table+": listed as global but has no merchant_id (remove it from the list)")
		}
	}
	sort.Strings(bad)
	for _, b := range bad {
		t.Error(b)
	}
}
