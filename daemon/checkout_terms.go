package daemon

import (
	"fmt"
	"math/big"

	"github.com/tollgatehq/tollgate/internal/chain"
	"github.com/tollgatehq/tollgate/internal/money"
)

// checkoutTerms is what GET /checkout/{id}/authorization answers: the
// typed data the wallet signs, each as eth_signTypedData_v4 takes it.
type checkoutTerms struct {
	Object        string                 `json:"object"`
	Kind          string                 `json:"kind"`
	Subscription  string                 `json:"subscription,omitempty"`
	TypedData     *chain.WalletTypedData `json:"typed_data,omitempty"`
	Plan          *chain.WalletTypedData `json:"plan,omitempty"`
	Permit        *chain.WalletTypedData `json:"permit,omitempty"`
	PermitSummary *permitSummary         `json:"permit_summary,omitempty"`
}

// permitSummary says in words and numbers what a permit lets the plan
// manager draw, for the page to show before the wallet asks: value (base
// units) in all, the allowance it replaces plus periods times the cap.
type permitSummary struct {
	Value     string `json:"value"`
	Allowance string `json:"allowance"`
	Periods   uint64 `json:"periods"`
	Cap       string `json:"cap"`
	Period    string `json:"period"`
	Text      string `json:"text"`
}

func permitSummaryOf(value, allowance *big.Int, periods uint64, capPerPeriod money.Amount, period string) *permitSummary {
	text := fmt.Sprintf("up to %s USDC in all: %d periods of at most %s USDC, one %s each", usdcText(value), periods, capPerPeriod.USDC(), period)
	if allowance.Sign() > 0 {
		text += fmt.Sprintf(", on top of the %s USDC already allowed", usdcText(allowance))
	}
	return &permitSummary{Value: value.String(), Allowance: allowance.String(), Periods: periods, Cap: capPerPeriod.String(),
		Period: period, Text: text}
}

// usdcText formats base units (6 decimals) as USDC, like money.Amount.USDC
// but for amounts past int64 (a permit's total).
func usdcText(v *big.Int) string {
	if v.IsInt64() {
		return money.Amount(v.Int64()).USDC()
	}
	q, r := new(big.Int).QuoRem(v, big.NewInt(1_000_000), new(big.Int))
	return fmt.Sprintf("%s.%06s", q, r.String())
}
