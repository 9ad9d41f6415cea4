// Package pricing rates usage with a plan's pricing model.
//
// PROVISIONAL: replaced by the full package (branch pricing).
package pricing

import (
	"encoding/json"
	"math/big"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/money"
)

// Model is a pricing model.
type Model struct {
	Kind       string `json:"kind"`
	UnitAmount int64  `json:"unitAmount"`
}

// Line explains part of a charge.
type Line struct {
	Description string `json:"description"`
	Quantity    string `json:"quantity"`
	UnitAmount  string `json:"unit_amount"`
	Amount      string `json:"amount"`
}

// Rating is a rated quantity.
type Rating struct {
	Amount *big.Int
	Lines  []Line
}

// Decode reads a pricing_model.
func Decode(raw json.RawMessage) (Model, error) {
	var m Model
	if err := json.Unmarshal(raw, &m); err != nil || m.Kind != "per_unit" {
		return Model{}, apperr.Field("pricing_model", "provisional: per_unit only")
	}
	return m, nil
}

// Wire is the canonical JSON.
func (m Model) Wire() json.RawMessage { b, _ := json.Marshal(m); return b }

// Rate prices quantity.
func (m Model) Rate(q *big.Int) Rating {
	a := new(big.Int).Mul(q, big.NewInt(m.UnitAmount))
	return Rating{Amount: a, Lines: []Line{{Description: "usage", Quantity: q.String(), UnitAmount: big.NewInt(m.UnitAmount).String(), Amount: a.String()}}}
}

// Cap applies the per-period cap.
func Cap(r Rating, cap money.Amount) (money.Amount, []Line) {
	if r.Amount.Cmp(big.NewInt(int64(cap))) > 0 {
		return cap, append(r.Lines, Line{Description: "capped", Amount: cap.String()})
	}
	return money.Amount(r.Amount.Int64()), r.Lines
}
