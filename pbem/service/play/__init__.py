"""Play: what happens to a game, decided and stored (with whom to tell) in one transaction."""
