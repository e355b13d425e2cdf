"""pbem.service layer."""
