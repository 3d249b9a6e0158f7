-- Refused attempts are aggregated (issue 13: a flood wrote ~1,400 rows a second and pushed real
-- decisions out of /review audit): one row per actor, action and minute, its count growing.
ALTER TABLE audit_log ADD COLUMN count INTEGER NOT NULL DEFAULT 1;
CREATE INDEX audit_log_refused_minute ON audit_log (platform, user_id, action, at) WHERE ok = 0;
CREATE INDEX audit_log_ok_at ON audit_log (ok, at);
