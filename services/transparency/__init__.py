"""The public log of game heads (shared/FAIRNESS.md "Public log of game heads"): an RFC 9162 Merkle
tree of ``(game id, version, head hash)`` leaves in Redis, signed C2SP checkpoints, witnesses."""
