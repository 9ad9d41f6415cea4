// Package audit owns the audit log: an append-only record of every change
// made from the merchant dashboard or by the `admin` commands, with who made
// it (a dashboard user, or admin), from which IP, when, and what it touched.
// The database refuses to change or delete its rows.
package audit

import (
	"context"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/id"
	"github.com/tollgatehq/tollgate/internal/page"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
)

// Admin is the actor of the admin commands.
const Admin = "admin"

// Actor is who makes a change: a dashboard user (usr_…) or Admin, and the
// IP the request came from ("" for the admin commands, run on the server).
type Actor struct {
	User string
	IP   string
}

// AdminActor is the actor of every admin command.
func AdminActor() Actor { return Actor{User: Admin} }

// Entry is one change to record. MerchantID is "" for a change that
// concerns no merchant; Mode is "" for one that concerns neither mode.
type Entry struct {
	MerchantID string
	Mode       tenant.Mode
	Action     string
	Target     string
	Detail     string
}

// Row is a recorded entry.
type Row struct {
	MerchantID string    `db:"merchant_id" json:"merchant_id"`
	ID         string    `db:"id" json:"id"`
	Seq        int64     `db:"seq" json:"-"`
	Mode       *string   `db:"mode" json:"mode"`
	Actor      string    `db:"actor" json:"actor"`
	IP         string    `db:"ip" json:"ip"`
	Action     string    `db:"action" json:"action"`
	Target     string    `db:"target" json:"target"`
	Detail     string    `db:"detail" json:"detail"`
	CreatedAt  time.Time `db:"created_at" json:"created_at"`
}

// maxDetail bounds the free text of an entry (a refund's reason, an email).
const maxDetail = 500

// Record appends e, made by a, to the log on q: pass the transaction of the
// change so that the change and its record commit together.
func Record(ctx context.Context, q store.Querier, a Actor, e Entry) error {
	if a.User == "" || e.Action == "" {
		return apperr.New(apperr.Internal, "audit: an entry needs an actor and an action")
	}
	var mode *string
	if e.Mode != "" {
		m := string(e.Mode)
		mode = &m
	}
	_, err := q.ExecContext(ctx, `INSERT INTO audit_log (merchant_id, id, mode, actor, ip, action, target, detail)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
		e.MerchantID, id.New("aud"), mode, a.User, clip(a.IP, 100), e.Action, clip(e.Target, 200), clip(e.Detail, maxDetail))
	return store.Translate(err)
}

// InTx runs change in a transaction and records e in the same one, when
// change succeeds: the admin commands' way of auditing a domain function
// that takes a store.Querier. entry sees change's result, so it can name
// what was created.
func InTx[T any](ctx context.Context, db *store.DB, a Actor, change func(tx *store.Tx) (T, error), entry func(T) Entry) (T, error) {
	return store.InTx(ctx, db, func(tx *store.Tx) (T, error) {
		out, err := change(tx)
		if err != nil {
			return out, err
		}
		return out, Record(ctx, tx, a, entry(out))
	})
}

// Filter selects entries for List.
type Filter struct {
	// MerchantID "" lists every merchant's entries (the admin command);
	// the dashboard always passes its session's merchant.
	MerchantID string
	All        bool
	Page       page.Params
}

const columns = `merchant_id, id, seq, mode, actor, ip, action, target, detail, created_at`

// List returns one page of entries, newest first: one merchant's, or with
// f.All every merchant's and the ones of no merchant.
func List(ctx context.Context, q store.Querier, f Filter) (page.Result[Row], error) {
	if f.Page.Limit == 0 {
		f.Page.Limit = page.DefaultLimit
	}
	rows := []Row{}
	var err error
	if f.All {
		where, args := f.Page.Where(1)
		err = q.SelectContext(ctx, &rows, `SELECT `+columns+` FROM audit_log WHERE `+where+` `+f.Page.Order(), args...)
	} else {
		where, args := f.Page.Where(2)
		err = q.SelectContext(ctx, &rows, `SELECT `+columns+` FROM audit_log WHERE merchant_id = $1 AND `+where+` `+f.Page.Order(),
			append([]any{f.MerchantID}, args...)...)
	}
	if err != nil {
		return page.Result[Row]{}, store.Translate(err)
	}
	return page.Build(rows, f.Page, func(r Row) page.Cursor { return page.Cursor{At: r.CreatedAt, Seq: r.Seq} }), nil
}

// clip keeps s within n characters of valid text without control
// characters: entries are shown on pages and in terminals.
func clip(s string, n int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
	if utf8.RuneCountInString(s) > n {
		s = string([]rune(s)[:n-1]) + "…"
	}
	return s
}

// owned reports whether OwnerEntry can find the merchant and mode of a row
// of table: the tables whose rows the admin commands change by id alone.
func owned(table string) bool {
	switch table {
	case "api_keys", "webhook_endpoints", "webhook_deliveries", "events", "entitlement_grants", "oauth_grants":
		return true
	}
	return false
}

// OwnerEntry is the entry for action on row rowID of table, with the
// merchant and mode that row belongs to (none when there is no such row:
// the change itself then fails).
func OwnerEntry(ctx context.Context, q store.Querier, table, rowID, action string) (Entry, error) {
	e := Entry{Action: action, Target: rowID}
	if !owned(table) {
		return e, apperr.New(apperr.Internal, "audit: no owner lookup for %s", table)
	}
	var rows []struct {
		MerchantID string      `db:"merchant_id"`
		Mode       tenant.Mode `db:"mode"`
	}
	if err := q.SelectContext(ctx, &rows, `SELECT merchant_id, mode FROM `+table+` WHERE id = $1 LIMIT 1`, rowID); err != nil {
		return e, store.Translate(err)
	}
	if len(rows) == 1 {
		e.MerchantID, e.Mode = rows[0].MerchantID, rows[0].Mode
	}
	return e, nil
}

// ChangeRow runs change to row rowID of table in a transaction that also
// records it (action, with the row's merchant and mode) as made by a. With
// a scope (the dashboard's session), a row of another merchant or mode, or
// none, is resource_not_found and nothing runs: whatever id a request
// names, it changes only its own merchant's rows. Without one (the admin
// commands) any row may be changed.
func ChangeRow(ctx context.Context, db *store.DB, a Actor, scope *tenant.Scope, table, rowID, action string, change func(tx *store.Tx) error) error {
	return db.InTx(ctx, func(tx *store.Tx) error {
		e, err := OwnerEntry(ctx, tx, table, rowID, action)
		if err != nil {
			return err
		}
		if scope != nil && (e.MerchantID != scope.MerchantID || e.Mode != scope.Mode || scope.MerchantID == "") {
			return apperr.New(apperr.ResourceNotFound, "no such object: %s", rowID)
		}
		if err := change(tx); err != nil {
			return err
		}
		return Record(ctx, tx, a, e)
	})
}
