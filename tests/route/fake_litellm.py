"""A stand-in for LiteLLM's `litellm` program, for the fast tier's tests of `route serve/status/stop`: it takes
LiteLLM's arguments, records what it was started with, and plays one behaviour on purpose. The real LiteLLM
runs in the realservers tier (tests/realservers/test_route_real.py).

    program(tmp_path, "ok")    # a path for AGENTCFG_LITELLM; its record: record(program)

Behaviours: ok (answers /health/liveliness with no key, and /health?model_id=LEG, as LiteLLM does only with the
router key, with that leg healthy (it asks no leg); plays the router for the agents' requests: /v1/models lists
the model group; /v1/chat/completions, /v1/responses and /v1/messages go to the first deployment, in the
config's order, that answers without a connection error, a 5xx, 401, 404 or 429, with `x-litellm-model-id: <its
id>` as LiteLLM sets it; every leg failing is a 429 as LiteLLM's cooldown gives it; the Gemini API's
/v1beta/models/GROUP:streamGenerateContent, the router key in x-goog-api-key, goes to each leg the same way, in the
Gemini API (tests/fault_server.py answers it), where LiteLLM turns it into a chat request), exit (prints an error and
exits 1 before listening), silent (runs and never listens).
The record (argv, the environment, the config's text) is written outside HOME, beside the program: it holds
the keys the process was given, on purpose.
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
    deployments = config["model_list"]
    master = config.get("general_settings", {}).get("master_key")
    router_key = os.environ.get(master.removeprefix("os.environ/")) if master else None

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:
            if self.path == "/health/liveliness":
                self._send(200, "I'm alive!")
            elif self.path.startswith("/health?model_id=") and self._authorised():
                self._send(200, {"healthy_endpoints": [{"model_id": self.path.split("=", 1)[1]}]})
            elif self.path.split("?")[0] in ("/v1/models", "/models") and self._authorised():
                group = deployments[0]["model_name"] if deployments else "route"
                self._send(200, {"object": "list", "data": [{"id": group, "object": "model", "owned_by": "openai"}]})
            else:
                self._send(404, {"detail": "Not Found"})

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length) if length else b"{}"
            path = self.path.split("?")[0]
            if path.startswith("/v1beta/models/"):
                if self._authorised():
                    self._route(self.path, json.loads(raw or b"{}"))
                return
            path = path if path.startswith("/v1/") else "/v1" + path
            if path not in ("/v1/chat/completions", "/v1/responses", "/v1/messages"):
                self._send(404, {"detail": "Not Found"})
            elif self._authorised():
                self._route(path, json.loads(raw or b"{}"))

        def _authorised(self) -> bool:
            if router_key is None:
                return True
            given = (
                self.headers.get("x-api-key")
                or self.headers.get("x-goog-api-key")
                or self.headers.get("authorization", "").removeprefix("Bearer ")
            )
            if given == router_key:
                return True
            self._send(401, {"error": {"message": "No api key passed in.", "type": "auth_error", "code": "401"}})
            return False

        def _route(self, path: str, body: dict) -> None:
            """Each deployment in order, as LiteLLM's `order` fallbacks try them (no cooldown kept here)."""
            import urllib.error
            import urllib.request

            opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
            for deployment in deployments:
                params = deployment["litellm_params"]
                key = params.get("api_key", "")
                key = os.environ.get(key.removeprefix("os.environ/"), "") if key.startswith("os.environ/") else key
                model = params["model"].removeprefix("openai/")
                headers = {"Content-Type": "application/json", "Authorization": f"Bearer {key}"}
                if path.startswith("/v1beta/models/"):  # the Gemini API: the model in the path, at the leg's root
                    url = params["api_base"].rstrip("/").removesuffix("/v1") + "/v1beta/models/" + model + ":"
                    url += path.partition(":")[2]
                    upstream, headers["x-goog-api-key"] = body, key
                else:
                    url = params["api_base"].rstrip("/") + path.removeprefix("/v1")
                    upstream = {**body, "model": model}
                request = urllib.request.Request(url, json.dumps(upstream).encode(), headers)
                try:
                    with opener.open(request, timeout=10) as response:
                        status, kind, data = response.status, response.headers.get("content-type", ""), response.read()
                except urllib.error.HTTPError as error:
                    status, kind, data = error.code, error.headers.get("content-type", ""), error.read()
                except OSError:
                    continue  # refused, reset, timed out: the next leg
                if status >= 500 or status in (401, 404, 408, 429):
                    continue
                self._send(status, data, kind, {"x-litellm-model-id": deployment["model_info"]["id"]})
                return
            self._send(
                429,
                {"error": {"message": "No deployments available for selected model", "type": "None", "code": "429"}},
            )

        def _send(self, status: int, body: object, kind: str = "application/json", extra: dict | None = None) -> None:
            data = body if isinstance(body, bytes) else json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(data)))
            for name, value in (extra or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: object) -> None:
            print(f"fake litellm: {self.requestline}", flush=True)

    ThreadingHTTPServer.daemon_threads = True
    ThreadingHTTPServer((_arg("--host"), int(_arg("--port"))), Handler).serve_forever()
