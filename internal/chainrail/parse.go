package chainrail

import (
	"encoding/json"
	"math/big"
	"strings"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/chain"
	"github.com/tollgatehq/tollgate/internal/fields"
)

// ForSubscription implements checkout.SubscriptionPayload: the activation
// records the subscription the settlement worker creates once confirmed.
func (a Activation) ForSubscription(planID, customerID, couponID string) any {
	a.PlanID, a.CustomerID, a.CouponID = planID, customerID, couponID
	return &a
}

// ParseActivation reads the JSON object the checkout page posts to
// subscribe to a plan in live mode:
//
//	{"plan": {"payer","payee","token","capPerPeriod","period","start","end","salt"},
//	 "signature": "0x…",
//	 "permit": {"value","deadline","signature"},   (optional: the payer approved the contract)
//	 "external_customer_id": "u_42"}               (optional)
//
// Integers are decimal strings or JSON integers (uint256). It fails with
// invalid_json, or invalid_request naming the field (plan.payer, …).
func ParseActivation(body []byte) (Activation, *string, error) {
	o, err := fields.Decode(body)
	if err != nil {
		return Activation{}, nil, err
	}
	var a Activation
	if raw := o.Raw("plan"); raw == nil {
		o.Fail(apperr.Field("plan", "is required"))
	} else if p, err := fields.Decode(raw); err != nil {
		o.Fail(apperr.Field("plan", "must be an object"))
	} else {
		a.Plan = chain.Plan{
			Payer: address(o, p, "plan.", "payer"), Payee: address(o, p, "plan.", "payee"), Token: address(o, p, "plan.", "token"),
			CapPerPeriod: uint256(o, p, "plan.", "capPerPeriod"), Period: uint256(o, p, "plan.", "period"),
			Start: uint256(o, p, "plan.", "start"), End: uint256(o, p, "plan.", "end"), Salt: hash32(o, p, "plan.", "salt"),
		}
		failUnknown(o, p, "plan.")
	}
	a.Signature = signature(o, o, "", "signature")
	if raw := o.Raw("permit"); raw != nil {
		if p, err := fields.Decode(raw); err != nil {
			o.Fail(apperr.Field("permit", "must be an object"))
		} else {
			a.Permit = chain.SignedPermit{Value: uint256(o, p, "permit.", "value"), Deadline: uint256(o, p, "permit.", "deadline"),
				Signature: signature(o, p, "permit.", "signature")}
			failUnknown(o, p, "permit.")
		}
	}
	ext := o.String("external_customer_id", 1, 200)
	if err := o.Err(); err != nil {
		return Activation{}, nil, err
	}
	return a, ext, nil
}

// The readers below read field name of sub-object p, reporting errors on
// the outer object o under prefix+name.

func failUnknown(o, p *fields.Object, prefix string) {
	if err := p.Err(); err != nil {
		if e, ok := apperr.As(err); ok {
			o.Fail(apperr.New(e.Code, "%s%s", prefix, e.Message))
			return
		}
		o.Fail(err)
	}
}

func str(o, p *fields.Object, prefix, name string, max int) string {
	raw := p.Raw(name)
	if raw == nil {
		o.Fail(apperr.Field(prefix+name, "is required"))
		return ""
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil || len(s) > max {
		o.Fail(apperr.Field(prefix+name, "must be a string of at most %d characters", max))
		return ""
	}
	return s
}

func address(o, p *fields.Object, prefix, name string) common.Address {
	s := str(o, p, prefix, name, 64)
	if s == "" {
		return common.Address{}
	}
	a, err := chain.ParseAddress(s)
	if err != nil {
		o.Fail(apperr.Field(prefix+name, "%s", err.(*apperr.Error).Message))
	}
	return a
}

func hash32(o, p *fields.Object, prefix, name string) common.Hash {
	s := str(o, p, prefix, name, 80)
	if s == "" {
		return common.Hash{}
	}
	b, err := hexutil.Decode(s)
	if err != nil || len(b) != 32 {
		o.Fail(apperr.Field(prefix+name, "must be 0x-prefixed hex of 32 bytes"))
		return common.Hash{}
	}
	return common.BytesToHash(b)
}

func signature(o, p *fields.Object, prefix, name string) []byte {
	s := str(o, p, prefix, name, 2+2*4096)
	if s == "" {
		return nil
	}
	b, err := chain.ParseSignature(s)
	if err != nil {
		o.Fail(apperr.Field(prefix+name, "%s", err.(*apperr.Error).Message))
	}
	return b
}

func uint256(o, p *fields.Object, prefix, name string) *big.Int {
	raw := p.Raw(name)
	if raw == nil {
		o.Fail(apperr.Field(prefix+name, "is required"))
		return new(big.Int)
	}
	s := string(raw)
	if strings.HasPrefix(s, `"`) {
		if err := json.Unmarshal(raw, &s); err != nil {
			o.Fail(apperr.Field(prefix+name, "must be a decimal string or an integer"))
			return new(big.Int)
		}
	}
	v, err := chain.ParseUint256(s)
	if err != nil {
		o.Fail(apperr.Field(prefix+name, "%s", err.(*apperr.Error).Message))
		return new(big.Int)
	}
	return v
}
