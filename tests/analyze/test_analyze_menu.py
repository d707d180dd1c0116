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


def _ask(archive, cwd, *answers) -> tuple[bytes, subprocess.CompletedProcess]:
    """Answer the menu with each of ``answers`` in turn, each once the question was asked (again)."""
    master, slave = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "nitpicker_cli.main", "analyze", str(archive)],
        stdin=slave,
        stdout=subprocess.PIPE,
        stderr=slave,
        cwd=cwd,
    )
    shown, deadline = b"", time.monotonic() + 60
    for asked, answer in enumerate(answers, 1):
        while shown.count(b"Analyzers to run") < asked and time.monotonic() < deadline:
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


def test_a_wrong_entry_asks_again(tmp_path):
    archive = build_archive(tmp_path / "site.nitpicker")
    numbers: dict[str, bytes] = {}

    def pick(shown: bytes) -> bytes:
        for number, name in re.findall(rb"^\s+(\d+)\. (\S+) ", shown, re.M):
            numbers[name.decode()] = number
        return numbers["text"] + b"\n"

    shown, done = _ask(archive, tmp_path, b"99\n", b"x, 1\n", pick)
    assert done.returncode == 0, shown.decode(errors="replace")
    assert b"not a number from the list: '99'" in shown and b"not a number from the list: 'x'" in shown
    assert shown.count(b"Analyzers to run") == 3  # asked again after each wrong entry, then ran
    assert list(json.loads(done.stdout)["analyzers"]) == ["text"]
