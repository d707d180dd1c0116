"""Shell completion as the README documents it: `eval "$(_NITPICKER_COMPLETE=bash_source nitpicker)"` in bash."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPTS = Path(sys.executable).parent


@pytest.fixture(scope="module")
def bash_env() -> dict[str, str]:
    if shutil.which("bash") is None or not (SCRIPTS / "nitpicker").is_file():
        pytest.skip("needs bash and the nitpicker console script next to this interpreter")
    return {**os.environ, "PATH": f"{SCRIPTS}{os.pathsep}{os.environ.get('PATH', '')}"}


def _complete(bash_env: dict[str, str], *lines: str) -> list[set[str]]:
    """What bash offers for the last word of each of ``lines``, through the function the README's eval installs.

    One bash for all lines: each completion starts the CLI once, which takes seconds on a loaded machine.
    """
    script = [
        'eval "$(_NITPICKER_COMPLETE=bash_source nitpicker)"',
        "complete -p nitpicker >/dev/null || exit 3",
    ]
    for line in lines:
        words = line.split() + ([""] if line.endswith(" ") else [])
        script += [
            f"COMP_WORDS=({' '.join(repr(w) for w in words)})",
            f"COMP_CWORD={len(words) - 1}",
            "COMPREPLY=()",
            "_nitpicker_completion nitpicker",
            'printf "%s\\n" "${COMPREPLY[@]}" "--"',
        ]
    done = subprocess.run(
        ["bash", "--norc", "--noprofile", "-c", "\n".join(script)],
        env=bash_env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    answers = done.stdout.split("--\n")[:-1]
    assert len(answers) == len(lines), done.stdout
    return [{word for word in answer.splitlines() if word} for answer in answers]


def test_commands_options_and_analyzers_complete_in_bash(bash_env) -> None:
    commands, option, analyzers, some = _complete(
        bash_env,
        "nitpicker p",
        "nitpicker pipeline --pl",
        "nitpicker analyze --plugin ",
        "nitpicker pipeline --plugin ma",
    )
    assert {"pipeline", "plugins"} <= commands
    assert option == {"--plugin"}
    assert {"axe", "markup", "text", "main-contents"} <= analyzers  # the analyzers' names, not files
    assert some == {"main-contents", "markup"}
