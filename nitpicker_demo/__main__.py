"""Serve the demo site for people: ``python -m nitpicker_demo --port 8020 --version 2``."""

from __future__ import annotations

import argparse
import threading

from nitpicker_demo import PREFIX, VERSIONS, serve


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m nitpicker_demo", description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8020)
    parser.add_argument(
        "--version",
        type=int,
        choices=VERSIONS,
        default=1,
        help="2 is the same shop later: crawl it with `crawl --update` to see what changed",
    )
    args = parser.parse_args()
    server, base = serve(args.host, args.port, args.version, quiet=False)
    print(f"demo site (version {args.version}) at {base}{PREFIX}/; Ctrl-C stops")
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        server.shutdown()


if __name__ == "__main__":
    main()
