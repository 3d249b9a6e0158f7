-- The duplicate check becomes a constraint: at most one pending or approved submission per (non-blank)
-- fingerprint, so two concurrent /submit of the same measurement can't both be stored (issue 13).
-- A database written before this may already hold such duplicates (the race this closes): every one
-- but the oldest is set aside first (a pending copy rejected, an approved copy withdrawn, the reason
-- naming the one kept), so the index can be built and no row is deleted.
UPDATE submissions
SET status = CASE status WHEN 'pending' THEN 'rejected' ELSE 'withdrawn' END,
    reason = 'duplicate of #' || (
        SELECT MIN(kept.id) FROM submissions AS kept
        WHERE kept.fingerprint = submissions.fingerprint AND kept.status IN ('pending', 'approved')
    ),
    decided_at = created_at
WHERE fingerprint <> '' AND status IN ('pending', 'approved')
  AND id > (
        SELECT MIN(kept.id) FROM submissions AS kept
        WHERE kept.fingerprint = submissions.fingerprint AND kept.status IN ('pending', 'approved')
  );
CREATE UNIQUE INDEX submissions_live_fingerprint ON submissions (fingerprint)
    WHERE fingerprint <> '' AND status IN ('pending', 'approved');
