"""pbem: a play-by-email adjudicator for Risk."""

from pbem import native as _native

__version__ = "0.1.0"

# The compiled rules engine (scripts/build_native.py) is used only when it
# matches its sources and PBEM_NATIVE is not 0; decided before any rules module
# is imported.
_native.check()
