-- How many sensitive values data-loss prevention swapped for placeholders before the prompt
-- was sent, by kind, as a JSON object ({"email": 2}); NULL when none were. Never the values.
ALTER TABLE runs ADD COLUMN redactions TEXT;
