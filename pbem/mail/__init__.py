"""pbem.mail layer."""
