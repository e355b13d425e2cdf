"""What every use case of the service needs to know about its surroundings."""

from __future__ import annotations

from dataclasses import dataclass, field

from pbem.config import Config
from pbem.service.clock import Clock


@dataclass
class Context:
    """The configuration, the clock (the only source of time), and the
    addresses that are our own (never answered: no mail loops)."""

    config: Config
    clock: Clock
    own_addresses: set[str] = field(default_factory=set)
