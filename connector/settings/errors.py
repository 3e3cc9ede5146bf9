"""The one error type of the settings: raised by parsing and by the checks made at start."""

from __future__ import annotations


class ConfigError(ValueError):
    """A configuration problem; `str()` is the one line shown to the user."""


class ConfigProblems(ConfigError):
    """Every refused or invalid key of one file, a line each (shown each as an error line)."""

    def __init__(self, lines: list[str]) -> None:
        super().__init__("\n".join(lines))
        self.lines = lines
