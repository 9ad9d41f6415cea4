package pricing

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"slices"
	"strconv"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/money"
)

// Decode reads a `pricing_model` JSON object strictly and validates it (see
// Model.Validate). Field names are the API's camelCase, matched exactly.
// Amounts are JSON integers or strings of digits, as everywhere in the API;
// so are unit counts. `includedUnits` is optional (default 0); `upTo` may be
// omitted on the last tier, which is the same as null. Every failure is 400
// invalid_request whose message names the field as pricing_model.<field>
// (tiers indexed from 0, e.g. pricing_model.tiers[2].upTo): not an object,
// a key given twice, an unknown field or one of another kind, a missing
// field, a wrong type, a value out of range.
func Decode(raw json.RawMessage) (Model, error) {
	members, keys, err := object(raw, "pricing_model")
	if err != nil {
		return Model{}, err
	}
	kindRaw := members["kind"]
	if isNull(kindRaw) {
		return Model{}, apperr.Field(prefix+"kind", "is required")
	}
	var kind string
	if json.Unmarshal(kindRaw, &kind) != nil {
		return Model{}, apperr.Field(prefix+"kind", "must be a string")
	}
	m := Model{Kind: Kind(kind)}
	allowed := kindFields(m.Kind)
	if allowed == nil {
		return Model{}, apperr.Field(prefix+"kind", "must be one of per_unit, package, tiered, flat")
	}
	for _, k := range keys {
		if k == "kind" || slices.Contains(allowed, k) {
			continue
		}
		if isField(k) {
			return Model{}, apperr.Field(prefix+k, "is not a field of kind %s", kind)
		}
		return Model{}, apperr.Field(prefix+k, "unknown field")
	}
	switch m.Kind {
	case PerUnit:
		if m.UnitAmount, err = amount(members, prefix, "unitAmount"); err != nil {
			return Model{}, err
		}
		if !isNull(members["includedUnits"]) {
			if m.IncludedUnits, err = count(members["includedUnits"], prefix+"includedUnits", 0); err != nil {
				return Model{}, err
			}
		}
	case Package:
		if m.UnitAmount, err = amount(members, prefix, "unitAmount"); err != nil {
			return Model{}, err
		}
		if isNull(members["packageSize"]) {
			return Model{}, apperr.Field(prefix+"packageSize", "is required")
		}
		if m.PackageSize, err = count(members["packageSize"], prefix+"packageSize", 1); err != nil {
			return Model{}, err
		}
	case Flat:
		if m.Amount, err = amount(members, prefix, "amount"); err != nil {
			return Model{}, err
		}
	case Tiered:
		if m.Mode, err = mode(members["mode"]); err != nil {
			return Model{}, err
		}
		if m.Tiers, err = tiers(members["tiers"]); err != nil {
			return Model{}, err
		}
	}
	return m, m.Validate()
}

func mode(raw json.RawMessage) (Mode, error) {
	if isNull(raw) {
		return "", apperr.Field(prefix+"mode", "is required")
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", apperr.Field(prefix+"mode", "must be a string")
	}
	if m := Mode(s); m == Graduated || m == Volume {
		return m, nil
	}
	return "", apperr.Field(prefix+"mode", "must be graduated or volume")
}

func tiers(raw json.RawMessage) ([]Tier, error) {
	if isNull(raw) {
		return nil, apperr.Field(prefix+"tiers", "is required")
	}
	var items []json.RawMessage
	if json.Unmarshal(raw, &items) != nil || len(items) == 0 || len(items) > MaxTiers {
		return nil, apperr.Field(prefix+"tiers", "must be an array of 1 to %d tiers", MaxTiers)
	}
	out := make([]Tier, len(items))
	for i, item := range items {
		at := prefix + "tiers[" + strconv.Itoa(i) + "]"
		members, keys, err := object(item, at)
		if err != nil {
			return nil, err
		}
		for _, k := range keys {
			if k != "upTo" && k != "unitAmount" {
				return nil, apperr.Field(at+"."+k, "unknown field")
			}
		}
		if out[i].UnitAmount, err = amount(members, at+".", "unitAmount"); err != nil {
			return nil, err
		}
		if up := members["upTo"]; !isNull(up) {
			n, err := count(up, at+".upTo", 1)
			if err != nil {
				return nil, err
			}
			out[i].UpTo = &n
		}
	}
	return out, nil
}

// amount reads the required amount members[name], naming it path+name.
func amount(members map[string]json.RawMessage, path, name string) (money.Amount, error) {
	raw := members[name]
	if isNull(raw) {
		return 0, apperr.Field(path+name, "is required")
	}
	a, err := money.ParseJSON(raw)
	if errors.Is(err, money.ErrOverflow) {
		return 0, apperr.Field(path+name, "must be at most %d base units", int64(math.MaxInt64))
	}
	if err != nil {
		return 0, apperr.Field(path+name, "%s", err.Error())
	}
	return a, nil
}

// count reads a unit count from min to MaxUnits: a JSON integer or a
// string of digits, like amounts.
func count(raw json.RawMessage, field string, min int64) (int64, error) {
	a, err := money.ParseJSON(raw)
	if errors.Is(err, money.ErrSyntax) {
		return 0, apperr.Field(field, "must be a non-negative integer (a JSON integer or a string of digits)")
	}
	if err != nil || int64(a) < min || a > MaxUnits {
		return 0, apperr.Field(field, "must be an integer from %d to %d", min, int64(MaxUnits))
	}
	return int64(a), nil
}

// object splits one JSON object into its members and their keys in
// document order, rejecting a key given twice (as every body does) and anything that
// is not exactly one object.
func object(raw []byte, path string) (map[string]json.RawMessage, []string, error) {
	notObject := apperr.Field(path, "must be a JSON object")
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, nil, notObject
	}
	members := map[string]json.RawMessage{}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, notObject
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, nil, notObject
		}
		if _, dup := members[key]; dup {
			return nil, nil, apperr.Field(path+"."+key, "is given twice")
		}
		members[key] = v
		keys = append(keys, key)
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('}') {
		return nil, nil, notObject
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, nil, notObject
	}
	return members, keys, nil
}

func isNull(raw json.RawMessage) bool {
	return raw == nil || string(bytes.TrimSpace(raw)) == "null"
}

// isField reports whether name is a field of some kind.
func isField(name string) bool {
	for _, k := range []Kind{PerUnit, Package, Tiered, Flat} {
		if slices.Contains(kindFields(k), name) {
			return true
		}
	}
	return false
}
