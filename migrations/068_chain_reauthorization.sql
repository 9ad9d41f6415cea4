-- A live plan change above what the payer authorized is a new PlanManager
-- plan the payer signs, activated by the relayer (chain_settlements kind
-- 'activate' whose subject names the subscription). At most one such
-- activation of a subscription is open (pending, or confirmed and not yet
-- recorded) at a time: a second signed plan posted meanwhile (a double
-- submit, a second tab) answers the first instead of charging again.
CREATE UNIQUE INDEX chain_settlements_one_change ON chain_settlements (merchant_id, mode, (subject->>'subscription_id'))
    WHERE kind = 'activate' AND subject ? 'subscription_id' AND status <> 'failed' AND recorded_at IS NULL;
