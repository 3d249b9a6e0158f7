-- "Was this helpful?" under every answer (issue 12): one vote per person per answer (a second press
-- changes it), kept with what a moderator needs to improve from it: the question, the query the
-- estimate was made for (JSON), the reply's first lines and the calibration that produced it.
CREATE TABLE feedback (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    answer_key      TEXT    NOT NULL,          -- the answer's follow-up key
    platform        TEXT    NOT NULL,          -- the voter
    user_id         TEXT    NOT NULL,
    user_name       TEXT    NOT NULL DEFAULT '',
    user_roles      TEXT    NOT NULL DEFAULT '[]',
    chat_id         TEXT    NOT NULL,
    helpful         INTEGER NOT NULL CHECK (helpful IN (0, 1)),
    question        TEXT    NOT NULL,
    query           TEXT    NOT NULL,          -- AskQuery.as_json(), as JSON text
    reply           TEXT    NOT NULL,
    engine_version  TEXT    NOT NULL DEFAULT '',
    lang            TEXT    NOT NULL DEFAULT 'en',
    at              TEXT    NOT NULL,
    UNIQUE (platform, user_id, answer_key)
);
CREATE INDEX feedback_helpful_at ON feedback (helpful, at);
