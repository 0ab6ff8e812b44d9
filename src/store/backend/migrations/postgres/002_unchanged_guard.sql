-- PostgreSQL version 2: the guard of an optimistic turn (docs/scale-out.md, The Node driver, "A
-- steady turn claims its conversation"; src/store/claim.rs). A gateway that read a conversation's row (with its xmin) in `assemble`, and wrote
-- nothing of it since, commits its next turn without reading anything first: the transaction's
-- first statement is this call, which locks the row and fails the transaction with SQLSTATE
-- LW409 unless the row is still the active one at the xmin the gateway read. Every transaction
-- that writes a conversation's messages, context items, advancement keys or host facts also
-- updates its row, so an unchanged xmin means the gateway's picture of all of them is current.
-- The engine then runs the turn again the pessimistic way.
CREATE FUNCTION lossless_wasm_claim_unchanged(conversation bigint, seen_xmin bigint) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM 1 FROM conversations c
     WHERE c.id = conversation AND c.status = 'active' AND CAST(CAST(c.xmin AS text) AS bigint) = seen_xmin
       FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'conversation % changed since this gateway read it (another writer committed, or it was archived)', conversation
            USING ERRCODE = 'LW409';
    END IF;
END
$$;
