"""The static game site (`pbem site OUT/`): public pages any static web server can serve."""

from pbem.site.build import build_site

__all__ = ["build_site"]
