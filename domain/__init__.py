"""The rules of the games: pure Deciders, no I/O, no clock, no global randomness."""
