package store_test

import (
	"context"
	"testing"

	"github.com/lib/pq"

	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/testdb"
)

// FuzzNullTexts checks that NullTexts sends what pq.GenericArray sends for
// the same []*string, whose text form PostgreSQL's array_in reads.
func FuzzNullTexts(f *testing.F) {
	f.Add("a", "", true, `say "hi" \ bye`)
	f.Add(`{,}`, "NULL", false, " x ")
	f.Fuzz(func(t *testing.T, a, b string, bNull bool, c string) {
		in := []*string{&a, &b, &c, nil}
		if bNull {
			in[1] = nil
		}
		got, err := store.NullTexts(in).Value()
		if err != nil {
			t.Fatal(err)
		}
		want, err := pq.GenericArray{A: in}.Value()
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Fatalf("NullTexts %q, pq.GenericArray %q", got, want)
		}
	})
}

// TestNullTextsRoundTrip sends arrays through PostgreSQL and reads them
// back element by element, NULLs included.
func TestNullTextsRoundTrip(t *testing.T) {
	ctx := context.Background()
	db, err := store.Open(ctx, testdb.New(t))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	str := func(s string) *string { return &s }
	for _, in := range [][]*string{
		{str("plain"), nil, str(""), str(`quo"te`), str(`back\slash`), str("{,}"), str("NULL"), str(" spaced "), str("é✓")},
		{},
		{nil},
	} {
		var got []struct {
			V *string `db:"v"`
		}
		if err := db.SelectContext(ctx, &got, `SELECT v FROM unnest($1::text[]) WITH ORDINALITY AS t (v, n) ORDER BY n`, store.NullTexts(in)); err != nil {
			t.Fatal(err)
		}
		if len(got) != len(in) {
			t.Fatalf("%d elements sent, %d read back", len(in), len(got))
		}
		for i := range in {
			if (in[i] == nil) != (got[i].V == nil) || (in[i] != nil && *in[i] != *got[i].V) {
				t.Errorf("element %d: sent %v, read %v", i, in[i], got[i].V)
			}
		}
	}
	var isNull bool
	if err := db.GetContext(ctx, &isNull, `SELECT $1::text[] IS NULL`, store.NullTexts(nil)); err != nil || !isNull {
		t.Fatalf("a nil NullTexts: NULL %v, %v", isNull, err)
	}
}
