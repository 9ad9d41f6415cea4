package watch

import (
	"math/big"
	"sort"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"

	"github.com/tollgatehq/tollgate/internal/chain"
)

// decode turns a log into an Event; ok is false for a log it does not know
// or that is malformed (a token that is not what it claims).
func (w *Watcher) decode(l types.Log) (Event, bool) {
	if len(l.Topics) == 0 {
		return Event{}, false
	}
	ev := Event{Log: l}
	word := func(i int) *big.Int {
		if len(l.Data) < 32*(i+1) {
			return nil
		}
		return new(big.Int).SetBytes(l.Data[32*i : 32*(i+1)])
	}
	switch {
	case l.Address == w.cfg.Token && (l.Topics[0] == chain.TopicTransfer || l.Topics[0] == chain.TopicApproval):
		if len(l.Topics) != 3 || word(0) == nil {
			return Event{}, false
		}
		ev.Kind = Transfer
		ev.From = common.BytesToAddress(l.Topics[1].Bytes())
		ev.To = common.BytesToAddress(l.Topics[2].Bytes())
		ev.Value = word(0)
		if l.Topics[0] == chain.TopicApproval {
			ev.Kind = Approval
			ev.AllowanceRevoked = ev.To == w.cfg.PlanManager && ev.Value.Sign() == 0
		}
	case l.Address == w.cfg.PlanManager && l.Topics[0] == chain.TopicPlanActivated && len(l.Topics) == 4:
		ev.Kind = PlanActivated
		ev.PlanID = l.Topics[1]
		ev.From = common.BytesToAddress(l.Topics[2].Bytes())
		ev.To = common.BytesToAddress(l.Topics[3].Bytes())
	case l.Address == w.cfg.PlanManager && l.Topics[0] == chain.TopicPlanCharged && len(l.Topics) == 3:
		if word(0) == nil {
			return Event{}, false
		}
		ev.Kind = PlanCharged
		ev.PlanID, ev.Ref = l.Topics[1], l.Topics[2]
		ev.Value = word(0)
	case l.Address == w.cfg.PlanManager && l.Topics[0] == chain.TopicPlanRevoked && len(l.Topics) == 3:
		ev.Kind = PlanRevoked
		ev.PlanID = l.Topics[1]
		ev.From = common.BytesToAddress(l.Topics[2].Bytes())
	default:
		return Event{}, false
	}
	return ev, true
}

func sortLogs(logs []types.Log) {
	sort.SliceStable(logs, func(i, j int) bool {
		if logs[i].BlockNumber != logs[j].BlockNumber {
			return logs[i].BlockNumber < logs[j].BlockNumber
		}
		return logs[i].Index < logs[j].Index
	})
}
