package store_test

import (
	"context"
	"math"
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

// FuzzTexts checks that Texts sends what pq.StringArray sends.
func FuzzTexts(f *testing.F) {
	f.Add("a", "", `say "hi" \ bye`)
	f.Add(`{,}`, "NULL", " x ")
	f.Fuzz(func(t *testing.T, a, b, c string) {
		for _, in := range [][]string{{a, b, c}, {a}, {}, nil} {
			got, err := store.Texts(in).Value()
			if err != nil {
				t.Fatal(err)
			}
			want, err := pq.StringArray(in).Value()
			if err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Fatalf("Texts %q, pq.StringArray %q", got, want)
			}
		}
	})
}

// FuzzInt64s checks that Int64s sends what pq.Int64Array sends.
func FuzzInt64s(f *testing.F) {
	f.Add(int64(0), int64(-1), int64(1<<40))
	f.Add(int64(math.MinInt64), int64(math.MaxInt64), int64(-10))
	f.Fuzz(func(t *testing.T, a, b, c int64) {
		for _, in := range [][]int64{{a, b, c}, {a}, {}, nil} {
			got, err := store.Int64s(in).Value()
			if err != nil {
				t.Fatal(err)
			}
			want, err := pq.Int64Array(in).Value()
			if err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Fatalf("Int64s %q, pq.Int64Array %q", got, want)
			}
		}
	})
}
