-- Coupons: percent or amount off a subscription's charges, and the
-- discount a subscription carries.
CREATE TABLE coupons (
    merchant_id          text NOT NULL REFERENCES merchants (id),
    mode                 text NOT NULL CHECK (mode IN ('test', 'live')),
    id                   text NOT NULL,
    seq                  bigint GENERATED ALWAYS AS IDENTITY,
    name                 text,
    code                 text,
    percent_off          integer CHECK (percent_off BETWEEN 1 AND 100),
    amount_off           numeric(39, 0) CHECK (amount_off >= 1),
    duration             text NOT NULL CHECK (duration IN ('once', 'repeating', 'forever')),
    duration_in_periods  integer CHECK (duration_in_periods BETWEEN 1 AND 120),
    max_redemptions      bigint CHECK (max_redemptions >= 1),
    redeem_by            timestamptz,
    applies_to           text[],
    -- Counted by the redeeming transaction under the row's lock; the check
    -- is the last guard of the limit.
    times_redeemed       bigint NOT NULL DEFAULT 0 CHECK (times_redeemed >= 0 AND times_redeemed <= coalesce(max_redemptions, times_redeemed)),
    status               text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'archived')),
    created_at           timestamptz NOT NULL DEFAULT now(),
    archived_at          timestamptz,
    PRIMARY KEY (merchant_id, id),
    CHECK ((percent_off IS NULL) <> (amount_off IS NULL)),
    CHECK ((duration = 'repeating') = (duration_in_periods IS NOT NULL))
);
CREATE INDEX coupons_list ON coupons (merchant_id, mode, created_at DESC, seq DESC);
-- Codes are unique per merchant and mode whatever their letter case, and
-- redemption looks them up by lower(code).
CREATE UNIQUE INDEX coupons_code ON coupons (merchant_id, mode, lower(code)) WHERE code IS NOT NULL;

-- A subscription's discount: the coupon's terms as redeemed, the period
-- index of the first charge it covers and how many it covers (null:
-- forever). Null when the subscription has none.
ALTER TABLE subscriptions ADD COLUMN discount jsonb;
