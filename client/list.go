package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"net/url"
	"strconv"
)

// ListParams are the query parameters every list endpoint takes.
type ListParams struct {
	// Limit is the page size, 1 to 100; 0 means the API's default (25).
	Limit int
	// Before is a previous page's NextCursor; empty starts at the newest.
	Before string
}

func (p ListParams) query() url.Values {
	q := url.Values{}
	if p.Limit != 0 {
		q.Set("limit", strconv.Itoa(p.Limit))
	}
	if p.Before != "" {
		q.Set("before", p.Before)
	}
	return q
}

// List is one page of a list endpoint, newest first.
type List[T any] struct {
	Object  string `json:"object"` // "list"
	Data    []T    `json:"data"`
	HasMore bool   `json:"has_more"`
	// NextCursor is the Before of the next page; empty on the last page.
	// Treat it as opaque.
	NextCursor string `json:"next_cursor"`
	// Raw is the page exactly as the API sent it.
	Raw json.RawMessage `json:"-"`
}

// ListFunc fetches one page; the client's List methods (c.ListInvoices, …)
// are ListFuncs.
type ListFunc[T any] func(ctx context.Context, p ListParams, opts ...CallOption) (*List[T], error)

// Pages walks a list page by page from p, passing each page's NextCursor as
// the next Before until HasMore is false. It yields a non-nil error at most
// once, as the last element.
func Pages[T any](ctx context.Context, fetch ListFunc[T], p ListParams, opts ...CallOption) iter.Seq2[*List[T], error] {
	return func(yield func(*List[T], error) bool) {
		for {
			page, err := fetch(ctx, p, opts...)
			if err != nil {
				yield(nil, err)
				return
			}
			if !yield(page, nil) || !page.HasMore {
				return
			}
			// A cursor that does not move would loop forever.
			if page.NextCursor == "" || page.NextCursor == p.Before {
				yield(nil, errors.New("client: list page has has_more without a new next_cursor"))
				return
			}
			p.Before = page.NextCursor
		}
	}
}

// All walks every object of a list from p, newest first, fetching pages as
// needed (see Pages). It yields a non-nil error at most once, as the last
// element.
func All[T any](ctx context.Context, fetch ListFunc[T], p ListParams, opts ...CallOption) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		for page, err := range Pages(ctx, fetch, p, opts...) {
			if err != nil {
				var zero T
				yield(zero, err)
				return
			}
			for _, item := range page.Data {
				if !yield(item, nil) {
					return
				}
			}
		}
	}
}

// object is the pointer to a wire type; setRaw keeps the JSON it was decoded
// from. Each wire type adds a one-line setRaw and gets create, get and list
// for free.
type object[T any] interface {
	*T
	setRaw(json.RawMessage)
}

func decodeObject[T any, P object[T]](b []byte) (*T, error) {
	v := new(T)
	if err := json.Unmarshal(b, v); err != nil {
		return nil, fmt.Errorf("client: decoding %T: %w", v, err)
	}
	P(v).setRaw(json.RawMessage(b))
	return v, nil
}

// create POSTs params to path and decodes the object in the response.
// idempotent marks endpoints the API makes idempotent by a key field.
func create[T any, P object[T]](ctx context.Context, c *Client, path string, params any, idempotent bool, opts []CallOption) (*T, error) {
	r, err := newRequest(http.MethodPost, path, params, idempotent, opts)
	if err != nil {
		return nil, err
	}
	r.autoKey(params)
	return call[T, P](ctx, c, r)
}

// call sends r and decodes the object in the response; GETs of a single
// object (balances, entitlement checks) build their request and use it too.
func call[T any, P object[T]](ctx context.Context, c *Client, r *request) (*T, error) {
	b, err := c.do(ctx, r)
	if err != nil {
		return nil, err
	}
	return decodeObject[T, P](b)
}

// get GETs the object at path.
func get[T any, P object[T]](ctx context.Context, c *Client, path string, opts []CallOption) (*T, error) {
	r, err := newRequest(http.MethodGet, path, nil, true, opts)
	if err != nil {
		return nil, err
	}
	return call[T, P](ctx, c, r)
}

// list GETs one page of the list at path.
func list[T any, P object[T]](ctx context.Context, c *Client, path string, p ListParams, opts []CallOption) (*List[T], error) {
	return listQuery[T, P](ctx, c, path, p.query(), opts)
}

// listQuery GETs one page of the list at path with query parameters q.
func listQuery[T any, P object[T]](ctx context.Context, c *Client, path string, q url.Values, opts []CallOption) (*List[T], error) {
	r, err := newRequest(http.MethodGet, path, nil, true, opts)
	if err != nil {
		return nil, err
	}
	r.query = q
	b, err := c.do(ctx, r)
	if err != nil {
		return nil, err
	}
	return decodeList[T, P](b)
}

// decodeList decodes a list envelope, keeping the raw page and each item's
// raw JSON.
func decodeList[T any, P object[T]](b []byte) (*List[T], error) {
	var env struct {
		Object     string            `json:"object"`
		Data       []json.RawMessage `json:"data"`
		HasMore    bool              `json:"has_more"`
		NextCursor *string           `json:"next_cursor"`
	}
	if err := json.Unmarshal(b, &env); err != nil {
		return nil, fmt.Errorf("client: decoding list: %w", err)
	}
	page := &List[T]{Object: env.Object, HasMore: env.HasMore, Data: make([]T, 0, len(env.Data)), Raw: b}
	if env.NextCursor != nil {
		page.NextCursor = *env.NextCursor
	}
	for _, raw := range env.Data {
		item, err := decodeObject[T, P](raw)
		if err != nil {
			return nil, err
		}
		page.Data = append(page.Data, *item)
	}
	return page, nil
}
