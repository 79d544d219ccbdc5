"""The learning loop: the curator distils turns into skills and sessions into notes."""
