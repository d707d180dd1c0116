"""Serve the test site for people: ``python -m test_server --port 8010``."""

from __future__ import annotations

import argparse
import time

from test_server import serve


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m test_server", description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8010)
    args = parser.parse_args()
    server, base_url = serve(args.host, args.port, quiet=False)
    print(f"test site at {base_url}/ (external host: http://127.0.0.1:{server.server_port}/); Ctrl-C stops")
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        server.shutdown()


if __name__ == "__main__":
    main()
