"""`profile add --detect` reads max_model_len from a server's GET /models (served here on 127.0.0.1)."""

from __future__ import annotations

import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from agentcfg import detect
from agentcfg.errors import AgentcfgError
from tests.conftest import SHARED_FIXTURES


def vllm_models_body() -> dict:
    path = SHARED_FIXTURES / "vllm-0.32-cpu" / "a_get_v1_models.json"
    if not path.exists():
        pytest.skip(f"shared fixtures not found at {path}")
    return json.loads(path.read_text())["body"]


@pytest.fixture
def server():
    """A tiny server whose /v1/models answer the test sets; records the Authorization header."""
    state = {"status": 200, "body": {}, "auth": []}

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            state["auth"].append(self.headers.get("Authorization"))
            data = json.dumps(state["body"]).encode() if self.path == "/v1/models" else b'{"detail":"Not Found"}'
            self.send_response(state["status"] if self.path == "/v1/models" else 404)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args):
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    state["url"] = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    yield state
    httpd.shutdown()


def test_context_window_from_real_vllm_capture():
    models = vllm_models_body()["data"]
    assert detect.context_window(models, "DeepSeek-V4-Flash", "u") == ("DeepSeek-V4-Flash", 2048)
    assert detect.context_window(models, None, "u") == ("DeepSeek-V4-Flash", 2048)
    with pytest.raises(AgentcfgError, match="does not serve a model named 'deepseek-v4-flash'"):
        detect.context_window(models, "deepseek-v4-flash", "u")


def test_gateway_without_max_model_len_is_told_to_give_the_window():
    with pytest.raises(AgentcfgError, match="max_model_len") as info:
        detect.context_window([{"id": "deepseek-chat", "object": "model"}], "deepseek-chat", "u")
    assert "--context-window" in info.value.hint


def test_profile_add_detect_against_a_local_server(home, server):
    server["body"] = vllm_models_body()
    result = home.run("profile", "add", "tiny", "--base-url", server["url"], "--detect")
    assert "window 2,048 tokens read from the server" in result.stdout
    profile = home.json("profile", "show", "tiny")
    assert profile["model"] == "DeepSeek-V4-Flash" and profile["context_window"] == 2048
    assert "key_env" not in profile
    # Every agent's first prompt is larger than 2048 tokens: switch says so for each it switches.
    # vLLM serves /v1/messages too: Claude Code gets the same server, without /v1
    assert profile["anthropic_base_url"] == server["url"].removesuffix("/v1")
    data = home.json("switch", "tiny", "--all")
    assert sum("will fail on this server" in n for n in data["notes"]) == 7
    assert set(data["skipped"]) == {"gemini"}  # Gemini CLI runs on a route only


def test_anthropic_url_only_for_vllm_and_only_from_a_v1_base():
    vllm = [{"id": "m", "owned_by": "vllm"}]
    assert detect.anthropic_base_url(vllm, "m", "http://127.0.0.1:8000/v1/") == "http://127.0.0.1:8000"
    assert detect.anthropic_base_url(vllm, "m", "http://127.0.0.1:8000/api") is None
    assert detect.anthropic_base_url(vllm, "other", "http://127.0.0.1:8000/v1") is None
    assert detect.anthropic_base_url([{"id": "m", "owned_by": "openai"}], "m", "https://gw.example/v1") is None


def test_an_anthropic_url_given_by_hand_wins_over_the_detected_one(home, server):
    server["body"] = vllm_models_body()
    home.run(
        "profile", "add", "tiny", "--base-url", server["url"], "--detect", "--anthropic-base-url", "http://127.0.0.1:9"
    )
    assert home.json("profile", "show", "tiny")["anthropic_base_url"] == "http://127.0.0.1:9"


def test_detect_sends_the_profile_key_only_to_its_own_server(home, server):
    server["body"] = vllm_models_body()
    home.run("profile", "add", "keyed", "--base-url", server["url"], "--key-env", "K", "--detect", K="sekrit-value")
    assert server["auth"] == ["Bearer sekrit-value"]


def test_detect_errors_are_clean(home, server):
    server["status"], server["body"] = 401, {"error": "Unauthorized"}
    result = home.run("profile", "add", "x", "--base-url", server["url"], "--detect", check=2)
    assert "wants a key" in result.stderr and "Traceback" not in result.stderr
    server["status"], server["body"] = 200, {"data": [{"id": "a", "max_model_len": 1}, {"id": "b"}]}
    assert (
        "say which with --model"
        in home.run("profile", "add", "x", "--base-url", server["url"], "--detect", check=2).stderr
    )
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{sock.getsockname()[1]}/v1"
    result = home.run("profile", "add", "x", "--base-url", dead, "--model", "m", "--detect", check=2)
    assert "could not reach" in result.stderr and "--context-window" in result.stderr
    assert not home.path(".config/agentcfg/profiles/x.toml").exists()
