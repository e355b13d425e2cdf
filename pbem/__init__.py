"""pbem: a play-by-email adjudicator for Risk."""

__version__ = "0.1.0"
