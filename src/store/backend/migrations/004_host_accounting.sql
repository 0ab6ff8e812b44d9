-- What the engine learned about each conversation's real prompt (core::accounting::HostFacts):
-- the model's window, the host's overhead around our view, the last reply and prompt sizes.
CREATE TABLE host_accounting (
    conversation_id INTEGER PRIMARY KEY REFERENCES conversations (id),
    facts_json TEXT NOT NULL,
    updated_at INTEGER NOT NULL
);
