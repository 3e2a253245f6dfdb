"""Pure code over a stored stream: the stored-event framing and hash chain, folding, the trusted
re-run, round audits, the export and the offline verifier. No Redis, no HTTP, no queue.

It may import the domain and nothing of the service: every room above reads a game through it, and
the offline verifier runs it with no server at all.
"""
