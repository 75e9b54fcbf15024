"""Errors that reach the user as one clear line.

Every mistake a user can make (a config typo, a missing file, a malformed data line, a broken
archive) raises a subclass of :class:`ToolkitError`. The CLI prints ``error: <message>`` and exits
with status 1 for these, and lets every other exception (a bug) show its traceback.
"""


class ToolkitError(Exception):
    """Base class of every error caused by the user's input rather than by a bug."""


class ConfigurationError(ToolkitError):
    """Raised when a config is invalid; the message names the key path (``model.encoder.num_layers``).

    A constructor that refuses one of its own arguments names just that key
    (``ConfigurationError("must be 'lstm' or 'sum'", key="composition")``): it cannot know where in
    the config it sits, but :mod:`toolkit.from_params`, which built it, does and completes the path
    (``model.encoder.composition: must be 'lstm' or 'sum'``).
    """

    def __init__(self, message: str, key: str | None = None, *, complete: bool = False):
        self.message, self.key = message, key
        self.complete = complete or key is None  # whether *key* is the whole path from the config's root
        super().__init__(f"{key}: {message}" if key else message)

    def at(self, path: str) -> "ConfigurationError":
        """This error with its key completed by *path*, the config path of the object that raised it."""
        return ConfigurationError(self.message, f"{path}.{self.key}" if path else self.key, complete=True)


class RegistryError(ConfigurationError):
    """Raised when a ``"type"`` names no registered implementation; the message lists the available ones."""


class DataError(ToolkitError):
    """Raised when a data file is missing or malformed; the message names the file and line."""

    def __init__(self, message: str, path: str | None = None, line: int | None = None):
        self.path, self.line = path, line
        where = f"{path}:{line}: " if path and line else f"{path}: " if path else ""
        super().__init__(where + message)


class ArchiveError(ToolkitError):
    """Raised when a model archive is missing, corrupt or incompatible."""


class TrainingError(ToolkitError):
    """Raised when training cannot go on usefully (too many skipped steps); the message says what to change."""
