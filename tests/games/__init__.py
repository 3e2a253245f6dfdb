"""Games that exist only for the tests, registered through the same registry as the real ones."""
