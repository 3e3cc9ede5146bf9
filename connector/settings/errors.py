"""The one error type of the settings: raised by parsing and by the checks made at start."""

from __future__ import annotations


class ConfigError(ValueError):
    """A configuration problem; `str()` is the one line shown to the user."""
