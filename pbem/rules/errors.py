"""Errors of the rules layer, each written for the person who will read it."""

from __future__ import annotations


class RulesError(Exception):
    """An action the rules forbid. ``rule`` names the rule that forbids it."""

    def __init__(self, rule: str, message: str) -> None:
        super().__init__(f"{message} (rule: {rule})")
        self.rule = rule
        self.message = message


class MapError(ValueError):
    """A map file that cannot be used; names the file and the offending entry."""

    def __init__(self, path: str, key: str, message: str) -> None:
        super().__init__(f"{path}: {key}: {message}")
        self.path = path
        self.key = key
        self.message = message


class OptionsError(ValueError):
    """A rule option or preset that does not exist or does not fit."""
