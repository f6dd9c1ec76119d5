"""A stand-in for LiteLLM's `litellm` program, for the fast tier's tests of `route serve/status/stop`: it takes
LiteLLM's arguments, records what it was started with, and plays one behaviour on purpose. The real LiteLLM
runs in the realservers tier (tests/realservers/test_route_real.py).

    program(tmp_path, "ok")    # a path for AGENTCFG_LITELLM; its record: record(program)

Behaviours: ok (answers /health/liveliness, reports each deployment healthy), exit (prints an error and
exits 1 before listening), silent (runs and never listens). The record (argv, the environment, the config's
text) is written outside HOME, beside the program: it holds the keys the process was given, on purpose.
"""

from __future__ import annotations

import json
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def program(directory: Path, behaviour: str) -> Path:
    """An executable `litellm` in `directory` that runs main(behaviour)."""
    path = directory / f"litellm-{behaviour}"
    path.write_text(
        f"#!{sys.executable}\nimport sys\nsys.path.insert(0, {str(REPO)!r})\n"
        f"from tests.route.fake_litellm import main\nmain({behaviour!r}, {str(path) + '.json'!r})\n"
    )
    path.chmod(0o755)
    return path


def record(path: Path) -> dict:
    return json.loads(Path(str(path) + ".json").read_text())


def _arg(name: str) -> str:
    return sys.argv[sys.argv.index(name) + 1]


def main(behaviour: str, record_file: str) -> None:
    import os

    config = json.loads(Path(_arg("--config")).read_text())
    Path(record_file).write_text(json.dumps({"argv": sys.argv, "env": dict(os.environ), "config": config}))
    if behaviour == "exit":
        print("Exception: the config is not what LiteLLM expects", flush=True)
        sys.exit(1)
    if behaviour == "silent":
        time.sleep(3600)
    ids = [d["model_info"]["id"] for d in config["model_list"]]

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if self.path == "/health/liveliness":
                self._send(200, "I'm alive!")
            else:
                self._send(404, {"detail": "Not Found"})

        def _send(self, status: int, body: object) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: object) -> None:
            print(f"fake litellm: {self.requestline}", flush=True)

    del ids
    ThreadingHTTPServer((_arg("--host"), int(_arg("--port"))), Handler).serve_forever()
