"""On a terminal, `nitpicker analyze` without --all/--plugin asks which analyzers to run."""

from __future__ import annotations

import json
import os
import pty
import re
import subprocess
import sys
import time

from archives import build_archive


def _ask(archive, cwd, answer: bytes) -> tuple[bytes, subprocess.CompletedProcess]:
    master, slave = pty.openpty()
    process = subprocess.Popen([sys.executable, "-m", "nitpicker_cli.main", "analyze", str(archive)],
                               stdin=slave, stdout=subprocess.PIPE, stderr=slave, cwd=cwd)
    shown, deadline = b"", time.monotonic() + 60
    while b"Analyzers to run" not in shown and time.monotonic() < deadline:
        shown += os.read(master, 4096)
    if callable(answer):
        answer = answer(shown)
    os.write(master, answer)
    stdout, _ = process.communicate(timeout=120)
    os.close(slave)
    while True:  # what the command wrote after the answer (errors go to the terminal too)
        try:
            chunk = os.read(master, 4096)
        except OSError:  # EIO: every writer of the terminal has closed it
            break
        if not chunk:
            break
        shown += chunk
    os.close(master)
    return shown, subprocess.CompletedProcess(process.args, process.returncode, stdout, b"")


def test_the_menu_lists_every_analyzer_and_runs_the_chosen_one(tmp_path):
    archive = build_archive(tmp_path / "site.nitpicker")
    numbers: dict[str, bytes] = {}

    def pick(shown: bytes) -> bytes:
        for number, name in re.findall(rb"^\s+(\d+)\. (\S+) ", shown, re.M):
            numbers[name.decode()] = number
        return numbers["main-contents"] + b"\n"

    shown, done = _ask(archive, tmp_path, pick)
    assert done.returncode == 0, shown.decode(errors="replace")
    assert {"axe", "markup", "text", "search", "main-contents", "lighthouse"} <= set(numbers)
    lighthouse_line = next(line for line in shown.decode().splitlines() if ". lighthouse " in line)
    assert lighthouse_line.endswith("(only when chosen)")
    assert list(json.loads(done.stdout)["analyzers"]) == ["main-contents"]


def test_a_number_outside_the_menu_is_one_line_error(tmp_path):
    archive = build_archive(tmp_path / "site.nitpicker")
    shown, done = _ask(archive, tmp_path, b"99\n")
    assert done.returncode == 1
    assert b"nitpicker: error: not a number from the list: '99'" in shown
