#!/usr/bin/env python3
"""A stand-in for `vllm serve` that plays vLLM's process shape and its faults on purpose, for the fast tests of
`agentcfg serve`'s life cycle (the realservers tier runs the real vLLM):

- the API server (this process) starts an engine child that names itself `VLLM::EngineCore` (as vLLM's does
  with setproctitle; here prctl, so /proc/PID/comm shows the cut name `VLLM::EngineCor`), in its process group;
- it answers /health, /v1/models (the served name and --max-model-len it was given), /metrics, and a chat
  completion, checking `Authorization` against VLLM_API_KEY when that is set;
- SIGINT or SIGTERM: it ends its engine and exits (vLLM's clean shutdown); a SIGKILL leaves the engine running,
  reparented, as vllm-project/vllm #55510 reports.

FAKE_VLLM_MODE picks a fault: `wrong-name` (serves "other-model"), `dead-engine` (/health 200, completions 500),
`slow-stop` (ignores SIGINT; SIGTERM works), `exit` (exits at once with an error line), `busy:N` (N requests in
flight in /metrics until a file `drained` appears beside its log). FAKE_VLLM_RECORD names a file where it writes
its argv and environment as JSON (the tests check what agentcfg gave it). FAKE_VLLM_GPU_MIB=N: the engine holds N
MiB of GPU memory through PyTorch (the gpu tier).
"""

from __future__ import annotations

import ctypes
import json
import os
import signal
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def _name(title: str) -> None:
    try:
        libc = ctypes.CDLL(None)
        libc.prctl(15, title.encode()[:15], 0, 0, 0)  # PR_SET_NAME
    except (OSError, AttributeError):
        pass


def _flag(args: list[str], name: str, default: str = "") -> str:
    return args[args.index(name) + 1] if name in args else default


def _engine() -> int:
    pid = os.fork()
    if pid == 0:
        if mib := int(os.environ.get("FAKE_VLLM_GPU_MIB") or 0):  # the gpu tier: hold GPU memory, as an engine does
            import torch

            held = torch.ones(mib * 1024 * 1024, dtype=torch.uint8, device="cuda")
            torch.cuda.synchronize()
            globals()["held"] = held
        _name("VLLM::EngineCore")
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # vLLM's engine leaves the stop to its server
        signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
        while True:
            time.sleep(1)
    return pid


def main() -> None:
    args = sys.argv[1:]
    mode = os.environ.get("FAKE_VLLM_MODE", "")
    if record := os.environ.get("FAKE_VLLM_RECORD"):
        with open(record, "w") as out:
            json.dump({"argv": sys.argv, "env": dict(os.environ)}, out)
    if mode == "exit":
        print("ValueError: fake vLLM was told to fail", file=sys.stderr, flush=True)
        sys.exit(1)
    assert args[:1] == ["serve"], args
    port = int(_flag(args, "--port", "8000"))
    host = _flag(args, "--host", "127.0.0.1")
    served = "other-model" if mode == "wrong-name" else _flag(args, "--served-model-name", args[1])
    window = int(_flag(args, "--max-model-len", "4096"))
    key = os.environ.get("VLLM_API_KEY")
    engine = _engine()

    def stop(signum: int, frame: object) -> None:
        if mode == "slow-stop" and signum == signal.SIGINT:
            return
        os.kill(engine, signal.SIGTERM)
        os.waitpid(engine, 0)
        os._exit(0)

    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)
    busy = int(mode.split(":", 1)[1]) if mode.startswith("busy:") else 0

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            print(self.requestline, flush=True)

        def _send(self, status: int, body: object, kind: str = "application/json") -> None:
            data = (body if isinstance(body, str) else json.dumps(body)).encode()
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _authorized(self) -> bool:
            if key and self.headers.get("Authorization") != f"Bearer {key}":
                self._send(401, {"error": "Unauthorized"})
                return False
            return True

        def do_GET(self) -> None:
            if self.path == "/health":
                self._send(200, "")
            elif self.path == "/metrics":
                running = busy if busy and not os.path.exists("drained") else 0
                label = f'{{model_name="{served}"}}'
                metrics = f"vllm:num_requests_running{label} {running}.0\nvllm:num_requests_waiting{label} 0.0\n"
                self._send(200, metrics, "text/plain")
            elif self.path == "/v1/models" and self._authorized():
                model = {"id": served, "object": "model", "owned_by": "vllm", "max_model_len": window}
                self._send(200, {"object": "list", "data": [model]})

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            if not self._authorized():
                return
            if mode == "dead-engine":
                self._send(500, {"error": {"message": "EngineDeadError", "type": "InternalServerError"}})
                return
            self._send(200, {"id": "c", "object": "chat.completion", "model": served,
                             "choices": [{"index": 0, "message": {"role": "assistant", "content": "hi"},
                                          "finish_reason": "length"}]})  # fmt: skip

    server = ThreadingHTTPServer((host, port), Handler)
    print(f"INFO fake vLLM serving {served} on {host}:{port}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
