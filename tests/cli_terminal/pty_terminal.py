"""A terminal for the CLI: the real `nitpicker` in a pseudo-terminal, its screen output read as it comes."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import struct
import subprocess
import sys
import termios
import threading
from pathlib import Path

from support import wait_until

# colours are dropped; cursor moves, erase-line and line ends separate what rich draws a live display with
_COLOUR = re.compile(r"\x1b\[[0-9;]*m")
_CONTROL = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\r|\n")


class Terminal:
    """`nitpicker ARGS` with stdin, stdout and stderr on one pty 200 columns wide (so rich never wraps)."""

    def __init__(self, *args: str, cwd: Path) -> None:
        master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 60, 200, 0, 0))
        env = dict(os.environ, COLUMNS="200", LINES="60", TERM="xterm-256color")
        env.pop("NO_COLOR", None)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "nitpicker_cli.main", *args],
            cwd=cwd,
            env=env,
            stdin=slave,
            stdout=slave,
            stderr=slave,
            close_fds=True,
        )
        os.close(slave)
        self._master = master
        self._raw = bytearray()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        while True:
            try:
                data = os.read(self._master, 65536)
            except OSError:  # the child closed the terminal
                return
            if not data:
                return
            self._raw.extend(data)

    @property
    def text(self) -> str:
        return bytes(self._raw).decode("utf-8", "replace")

    def fragments(self) -> list[str]:
        """Every line or redrawn line the screen showed, in order, without control sequences."""
        return [part.strip() for part in _CONTROL.split(_COLOUR.sub("", self.text)) if part.strip()]

    def wait_for(self, pattern: str, timeout: float = 180.0) -> re.Match[str]:
        regex = re.compile(pattern)

        def found() -> bool:
            return any(regex.search(f) for f in self.fragments()) or self.proc.poll() is not None

        wait_until(found, f"{pattern!r} on the terminal", timeout)
        match = next((m for f in self.fragments() if (m := regex.search(f))), None)
        assert match is not None, f"exited {self.proc.returncode} before {pattern!r}:\n{self.text[-3000:]}"
        return match

    def wait(self, timeout: float = 300.0) -> int:
        code = self.proc.wait(timeout=timeout)
        self._reader.join(timeout=30)
        os.close(self._master)
        return code
