-- Version 8: a message's content identity is stored as its 16 bytes, not as 32 hex characters
-- (the UNIQUE (conversation_id, identity_hash) index holds it a second time). The column keeps
-- its declared type; SQLite stores a BLOB in it as a BLOB. Identities that are not 32 hex digits
-- (none are written by this engine) stay as they are, and never equal a new 16-byte identity.
UPDATE messages SET identity_hash = unhex(identity_hash)
WHERE typeof(identity_hash) = 'text' AND length(identity_hash) = 32 AND unhex(identity_hash) IS NOT NULL;
