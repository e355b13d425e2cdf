"""Operations: the poll cycle, the daemon, health and status, listings, demo, simulations."""
