package chain

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"

	"github.com/ethereum/go-ethereum/signer/core/apitypes"
)

// WalletTypedData is typed data as a wallet's eth_signTypedData_v4 takes
// it, for every payload tollgate hands to a signer (checkout, plan and
// permit, revoke, refund). Its domain carries exactly the fields its
// EIP712Domain type declares, in the declared order, with chainId a JSON
// number: go-ethereum's TypedDataDomain always adds "salt": "", which ethers
// (and the wallets built on it) refuse as an invalid bytes32 although no
// salt is declared. It decodes back into apitypes.TypedData unchanged.
type WalletTypedData apitypes.TypedData

// MarshalJSON writes the typed data with only the declared domain fields.
// A declared field the domain has no value for (a nil chainId) is an
// error, never a silent null a wallet would hash differently.
func (w WalletTypedData) MarshalJSON() ([]byte, error) {
	d := w.Domain
	var dom bytes.Buffer
	dom.WriteByte('{')
	for i, f := range w.Types["EIP712Domain"] {
		var v any
		switch f.Name {
		case "name":
			v = d.Name
		case "version":
			v = d.Version
		case "chainId":
			if d.ChainId == nil {
				return nil, fmt.Errorf("typed data: EIP712Domain declares chainId but the domain has none")
			}
			v = (*big.Int)(d.ChainId)
		case "verifyingContract":
			v = d.VerifyingContract
		case "salt":
			v = d.Salt
		default:
			return nil, fmt.Errorf("typed data: unknown EIP712Domain field %q", f.Name)
		}
		if i > 0 {
			dom.WriteByte(',')
		}
		name, _ := json.Marshal(f.Name)
		val, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		dom.Write(name)
		dom.WriteByte(':')
		dom.Write(val)
	}
	dom.WriteByte('}')
	return json.Marshal(struct {
		Types       apitypes.Types            `json:"types"`
		PrimaryType string                    `json:"primaryType"`
		Domain      json.RawMessage           `json:"domain"`
		Message     apitypes.TypedDataMessage `json:"message"`
	}{w.Types, w.PrimaryType, dom.Bytes(), w.Message})
}
