"""pbem.rules layer."""
