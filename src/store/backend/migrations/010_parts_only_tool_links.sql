-- Version 10: `message_parts` keeps only the blocks that link a message to a tool call (a call's
-- id, or a tool result's call id and tool name). The view pairs tool calls with their results
-- through these rows; the other blocks (text, reasoning, images) had a row each that nothing
-- read (every block is in `raw_json`): ~18 bytes and one more B-tree insert per message.
DELETE FROM message_parts WHERE tool_call_id IS NULL AND tool_name IS NULL;
