-- tokbot community storage, first schema.
-- Datetimes are ISO-8601 UTC text with microseconds (fixed width, so text order is time order).
-- The columns that queries filter or join on are real, indexed columns; the rest of a measurement
-- (a dozen optional fields that only the renderer reads) is JSON.

CREATE TABLE submissions (
    id            INTEGER PRIMARY KEY,
    gpu_id        TEXT    NOT NULL,
    model_id      TEXT    NOT NULL,
    quant         TEXT    NOT NULL,
    decode_tps    REAL    NOT NULL,
    measurement   TEXT    NOT NULL,                 -- JSON: the whole Measurement
    platform      TEXT    NOT NULL,                 -- the submitter
    user_id       TEXT    NOT NULL,
    user_name     TEXT    NOT NULL DEFAULT '',
    user_roles    TEXT    NOT NULL DEFAULT '[]',    -- JSON list
    chat_id       TEXT    NOT NULL,
    lang          TEXT    NOT NULL DEFAULT 'en',
    status        TEXT    NOT NULL CHECK (status IN ('pending', 'approved', 'rejected', 'withdrawn')),
    origin        TEXT    NOT NULL CHECK (origin IN ('community', 'published')),
    estimate      TEXT,                             -- JSON EstimateSnapshot or NULL
    flags         TEXT    NOT NULL DEFAULT '[]',    -- JSON list
    fingerprint   TEXT    NOT NULL DEFAULT '',
    source        TEXT,
    source_date   TEXT,
    created_at    TEXT    NOT NULL,
    decided_by    TEXT,                             -- JSON Actor or NULL
    decided_at    TEXT,
    reason        TEXT
);
CREATE INDEX submissions_status_created ON submissions (status, created_at);
CREATE INDEX submissions_created ON submissions (created_at);
CREATE INDEX submissions_gpu_model ON submissions (gpu_id, model_id);
CREATE INDEX submissions_model ON submissions (model_id);
CREATE INDEX submissions_origin ON submissions (origin, status);
CREATE INDEX submissions_user_created ON submissions (platform, user_id, created_at);
CREATE INDEX submissions_fingerprint ON submissions (fingerprint);

CREATE TABLE subscriptions (
    id          INTEGER PRIMARY KEY,
    platform    TEXT    NOT NULL,
    user_id     TEXT    NOT NULL,
    chat_id     TEXT    NOT NULL,
    gpu_id      TEXT,                               -- NULL: any GPU
    model_id    TEXT,                               -- NULL: any model
    lang        TEXT    NOT NULL DEFAULT 'en',
    active      INTEGER NOT NULL DEFAULT 1,
    created_at  TEXT    NOT NULL
);
-- One row per (user, thing subscribed to); NULL means "any", and NULLs are distinct in a plain
-- UNIQUE index, hence the COALESCE expressions.
CREATE UNIQUE INDEX subscriptions_identity
    ON subscriptions (platform, user_id, COALESCE(gpu_id, ''), COALESCE(model_id, ''));
CREATE INDEX subscriptions_match ON subscriptions (active, gpu_id, model_id);
CREATE INDEX subscriptions_chat ON subscriptions (platform, chat_id);

CREATE TABLE outbox (
    id               INTEGER PRIMARY KEY,
    platform         TEXT    NOT NULL,
    chat_id          TEXT    NOT NULL,
    user_id          TEXT    NOT NULL,
    kind             TEXT    NOT NULL,              -- anchor | decision
    payload          TEXT    NOT NULL,              -- JSON object
    lang             TEXT    NOT NULL DEFAULT 'en',
    dedupe_key       TEXT    NOT NULL UNIQUE,       -- INSERT OR IGNORE on it: one notice per chat
    submission_id    INTEGER REFERENCES submissions (id),
    subscription_id  INTEGER REFERENCES subscriptions (id),
    status           TEXT    NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'sent', 'dead')),
    attempts         INTEGER NOT NULL DEFAULT 0,    -- failed attempts so far
    created_at       TEXT    NOT NULL,
    next_attempt_at  TEXT    NOT NULL,
    lease_until      TEXT,                          -- claimed by a worker until then
    sent_at          TEXT,
    last_error       TEXT
);
CREATE INDEX outbox_due ON outbox (platform, status, next_attempt_at);
CREATE INDEX outbox_chat ON outbox (platform, chat_id, status);
CREATE INDEX outbox_submission ON outbox (submission_id);

CREATE TABLE audit_log (
    id             INTEGER PRIMARY KEY,
    at             TEXT    NOT NULL,
    platform       TEXT    NOT NULL,
    user_id        TEXT    NOT NULL,
    user_name      TEXT    NOT NULL DEFAULT '',
    user_roles     TEXT    NOT NULL DEFAULT '[]',
    action         TEXT    NOT NULL,
    -- No foreign key: a refused attempt may name a submission that doesn't exist.
    submission_id  INTEGER,
    ok             INTEGER NOT NULL,
    detail         TEXT    NOT NULL DEFAULT ''
);
CREATE INDEX audit_log_at ON audit_log (at);
CREATE INDEX audit_log_submission ON audit_log (submission_id);
