-- Models resolved outside the catalog (the Hugging Face Hub look-ups of bot/hub), shared by every bot
-- process (SQLite: 0004). `payload` is the adapter's own JSON, kept by key with the time it was read.
CREATE TABLE resolved_models (
    key          TEXT PRIMARY KEY,
    payload      JSONB NOT NULL,
    resolved_at  TIMESTAMPTZ NOT NULL
);
