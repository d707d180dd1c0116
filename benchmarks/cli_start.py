"""What a `nitpicker` command costs before it does any work: CPU of `nitpicker --version` against a bare Python.

Every CLI command builds the plugin manager, which imports every installed plugin's module; the test suite
and scripts that call nitpicker many times pay this on each call. The baseline is the same interpreter
starting and exiting (`python -c pass`), measured alternately with nitpicker in one run so machine load
hits both alike. CPU time (user + system of the child) is reported, not wall time, which load distorts most.

    .venv/bin/python benchmarks/cli_start.py             # 10 rounds
    .venv/bin/python benchmarks/cli_start.py --imports   # also the slowest top-level imports (-X importtime)
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys

BASELINE = [sys.executable, "-c", "pass"]
NITPICKER = [sys.executable, "-m", "nitpicker_cli.main", "--version"]


def cpu_of(argv: list[str]) -> float:
    """User + system CPU seconds of one child process running ``argv``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def slowest_imports(count: int = 12) -> list[tuple[int, str]]:
    """The top-level imports of a CLI start with their cumulative microseconds, slowest first."""
    run = subprocess.run([sys.executable, "-X", "importtime", *NITPICKER[1:]], capture_output=True, text=True,
                         check=True, env={**os.environ, "PYTHONWARNINGS": "ignore"})
    rows = []
    for line in run.stderr.splitlines():
        parts = line.removeprefix("import time:").split("|")
        if len(parts) == 3 and parts[1].strip().isdigit() and not parts[2].startswith("  "):
            rows.append((int(parts[1]), parts[2].strip()))
    return sorted(rows, reverse=True)[:count]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--imports", action="store_true", help="list the slowest top-level imports too")
    args = parser.parse_args()
    cpu_of(NITPICKER)  # warm the OS file cache once, untimed
    base, ours = [], []
    for _ in range(args.rounds):
        base.append(cpu_of(BASELINE))
        ours.append(cpu_of(NITPICKER))
    b, n = statistics.median(base), statistics.median(ours)
    print(f"python -c pass        {b * 1000:7.0f} ms CPU (median of {args.rounds})")
    print(f"nitpicker --version   {n * 1000:7.0f} ms CPU")
    print(f"ratio                 {n / b:7.1f}x a bare interpreter; {(n - b) * 1000:.0f} ms of nitpicker's own")
    if args.imports:
        print("\nslowest top-level imports (cumulative):")
        for micros, name in slowest_imports():
            print(f"  {micros / 1000:7.1f} ms  {name}")


if __name__ == "__main__":
    main()
