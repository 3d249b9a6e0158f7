-- The numbers behind each moderator flag ("measured 6 tok/s, estimated 17-38"), so /review can show
-- them in the moderator's language long after the submission arrived. JSON list of [code, params].
ALTER TABLE submissions ADD COLUMN flag_details TEXT NOT NULL DEFAULT '[]';
