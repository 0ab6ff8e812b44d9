-- Version 13: every summarizer call, with the tokens it cost and what came of it. Summaries are
-- the product's running cost (most users' summarizer is a paid API), and a call whose answer is
-- thrown away is money spent on nothing: one row per call lets `/lcm status` show the spend per
-- conversation and per pass, and lets an operator see which calls paid off.
-- `counted_by` says whether the tokens are the provider's own count ('provider') or our
-- estimate ('estimate', when the host reported no usage).
CREATE TABLE summarizer_calls (
  id INTEGER PRIMARY KEY,
  conversation_id INTEGER NOT NULL REFERENCES conversations (id),
  created_at INTEGER NOT NULL,
  pass TEXT NOT NULL,
  level TEXT NOT NULL,
  input_tokens INTEGER NOT NULL,
  output_tokens INTEGER NOT NULL,
  counted_by TEXT NOT NULL,
  outcome TEXT NOT NULL,
  reason TEXT
);
CREATE INDEX summarizer_calls_by_conversation ON summarizer_calls (conversation_id, id);
