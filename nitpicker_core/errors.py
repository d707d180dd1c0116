"""Exceptions that nitpicker turns into one-line messages for its users."""

from __future__ import annotations


class NitpickerError(Exception):
    """A problem the user can fix; the CLI prints its message on one line and exits 1."""

    exit_code = 1


class UsageError(NitpickerError):
    """Bad arguments or configuration."""


class NotConfigured(Exception):
    """Raised by a plugin (usually in ``configure``) to switch itself off, with a reason.

    The plugin is recorded as unavailable with ``str(exc)`` as the reason; the rest of the run goes on.
    """


class ArchiveError(NitpickerError):
    """The archive cannot be opened or written (missing, corrupt, foreign, newer, locked)."""


class ArchiveLocked(ArchiveError):
    """Another live process holds the working directory's lock."""

    def __init__(self, message: str, pid: int | None = None) -> None:
        super().__init__(message)
        self.pid = pid


class RegistrationError(NitpickerError):
    """A plugin registered something invalid or a duplicate name."""
