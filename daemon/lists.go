package daemon

import (
	"net/http"

	"github.com/tollgatehq/tollgate/internal/page"
	"github.com/tollgatehq/tollgate/internal/wire"
)

// Handlers are adapters: decode the request, make one domain call, encode
// its wire form. Validation, transactions and events are the domain's.

// list serves a GET list endpoint: it parses limit and before, fetches a
// page and encodes each item.
func list[T, W any](w http.ResponseWriter, r *http.Request, fetch func(page.Params) (page.Result[T], error), conv func(T) W) error {
	params, err := page.ParseQuery(r.URL.Query())
	if err != nil {
		return err
	}
	res, err := fetch(params)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, toList(res, conv))
	return nil
}

// toList builds the list envelope of a page.
func toList[T, W any](r page.Result[T], conv func(T) W) wire.List {
	data := make([]W, len(r.Items))
	for i, it := range r.Items {
		data[i] = conv(it)
	}
	l := wire.List{Object: "list", Data: data, HasMore: r.HasMore}
	if r.Next != nil {
		c := r.Next.String()
		l.NextCursor = &c
	}
	return l
}
