"""Stands in front of a memory-protocol server and dies part-way through a run, once: a crash mid-run, for the
tests. The first time (no --once-file yet) it creates the file and kills itself and the server it started after
--die-after writes; later runs pass every request through.

    crash_proxy.py --port P --die-after N --once-file F -- SERVER_COMMAND... (the proxy appends --port Q)
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any


def main() -> None:
    split = sys.argv.index("--")
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--die-after", type=int, required=True)
    parser.add_argument("--once-file", required=True)
    options = parser.parse_args(sys.argv[1:split])
    once = Path(options.once_file)
    dying = not once.exists()
    once.touch()
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        inner = probe.getsockname()[1]
    server = subprocess.Popen([*sys.argv[split + 1 :], "--port", str(inner)])
    writes = 0

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def forward(self, body: bytes | None) -> None:
            nonlocal writes
            if self.path == "/write":
                writes += 1
                if dying and writes > options.die_after:
                    print(f"crash_proxy: dying on write {writes}", flush=True)
                    server.send_signal(signal.SIGKILL)
                    os._exit(9)
            request = urllib.request.Request(
                f"http://127.0.0.1:{inner}{self.path}",
                data=body,
                method=self.command,
                headers={"Content-Type": "application/json"},
            )
            for _ in range(600):  # the server may still be starting (mem0 loads its models)
                try:
                    with urllib.request.urlopen(request, timeout=120) as response:
                        status, payload = response.status, response.read()
                    break
                except urllib.error.HTTPError as error:
                    status, payload = error.code, error.read()
                    break
                except urllib.error.URLError:
                    time.sleep(0.1)
            else:
                status, payload = 503, b'{"error": "the server behind the proxy never answered"}'
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def do_GET(self) -> None:
            self.forward(None)

        def do_POST(self) -> None:
            self.forward(self.rfile.read(int(self.headers.get("Content-Length") or 0)))

    def stop(*_: Any) -> None:
        server.terminate()
        server.wait(10)
        os._exit(0)

    signal.signal(signal.SIGTERM, stop)
    HTTPServer(("127.0.0.1", options.port), Handler).serve_forever()


if __name__ == "__main__":
    main()
