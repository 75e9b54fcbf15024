"""Errors that reach the user as one clear line.

Every mistake a user can make (a config typo, a missing file, a malformed data line, a broken
archive) raises a subclass of :class:`ToolkitError`. The CLI prints ``error: <message>`` and exits
with status 1 for these, and lets every other exception (a bug) show its traceback.
"""


class ToolkitError(Exception):
    """Base class of every error caused by the user's input rather than by a bug."""


class ConfigurationError(ToolkitError):
    """Raised when a config is invalid; the message names the key path (``model.encoder.num_layers``)."""


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
