-- What a marker records of its run on an automated question (`markerRun` in the question view):
-- for a vision model, the provider's latency and tokens, repair rounds and how each piece of
-- evidence was placed. Counts and timings only: no prompt, image or answer text.
ALTER TABLE marking_questions ADD COLUMN marker_run_json TEXT;
