-- Models resolved outside the catalog (the Hugging Face Hub look-ups of bot/hub), so that every bot
-- process shares one cache and a restart doesn't ask the Hub again. `payload` is the adapter's own
-- JSON; storage only keeps it by key (the repo id, lower-cased) with the time it was read.
CREATE TABLE resolved_models (
    key          TEXT PRIMARY KEY,
    payload      TEXT NOT NULL,
    resolved_at  TEXT NOT NULL
);
