-- Version 3 (seed 01): summaries written by a fallback path are marked as such, so they can be
-- found and re-summarized: those named by a compaction event recorded at level 'fallback', and
-- those carrying the truncation canary of the engines we replace.
UPDATE summaries SET level = 'fallback'
WHERE level != 'fallback'
  AND (id IN (SELECT summary_id FROM compaction_events WHERE level = 'fallback' AND summary_id IS NOT NULL)
       OR instr(content, '[Truncated from') > 0);
