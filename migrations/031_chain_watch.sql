-- The chain watcher (internal/chain/watch): per watcher, the hashes of the
-- recent blocks it has read logs from. The highest number is its cursor;
-- each step re-checks these hashes against the canonical chain and rewinds
-- past any that changed (a reorg). Operator-level, like chain_intents.
CREATE TABLE chain_watch_blocks (
    watcher   text NOT NULL,
    chain_id  bigint NOT NULL,
    number    bigint NOT NULL,
    hash      text NOT NULL,
    PRIMARY KEY (watcher, chain_id, number)
);
