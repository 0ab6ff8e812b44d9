-- Version 15: what became of a conversation's summary requests across processes (the request in
-- flight and its sender, requests in a row that a process left unanswered), as JSON on the
-- conversation's row: `core::compaction::hold::SummaryRuns`. NULL until a summary is requested.
ALTER TABLE conversations ADD COLUMN summary_runs_json TEXT;
