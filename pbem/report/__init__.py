"""pbem.report layer."""
