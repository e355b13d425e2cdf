"""Map files and importers: reading, importing, checking and weighing maps.

Above the pure rules layer (which receives maps as text or data), below the
service.  See docs/MAPS.md.
"""

from pbem.maps.files import builtin_map, load_any, load_map, map_names, map_source

__all__ = ["builtin_map", "load_any", "load_map", "map_names", "map_source"]
