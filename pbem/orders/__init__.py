"""pbem.orders layer."""
