-- Admins' prices of image models: their picture tokens (US dollars per million, as the other
-- classes) and a price per picture (US dollars each), for an image tool's run whose answer
-- counts no output tokens.
ALTER TABLE prices ADD COLUMN image_output REAL;
ALTER TABLE prices ADD COLUMN per_image REAL;
