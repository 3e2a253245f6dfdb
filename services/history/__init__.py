"""Pure code over a stored stream: the stored-event framing and hash chain, folding, the trusted
re-run, round audits, the export and the offline verifier. No Redis, no HTTP, no queue."""
