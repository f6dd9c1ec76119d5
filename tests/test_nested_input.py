"""Red team, a server's answers: JSON nested deeper than Python's recursion limit (`[[[[...`, 40 KB, well
under doctor's body limit) makes json.loads raise RecursionError, which is not a ValueError: doctor
and bench stopped with an internal error instead of naming the broken answer."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.conftest import Home
from tests.fault_server import raw_server

NESTED = b"[" * 40000


@pytest.fixture(params=[200, 400])
def nested_server(request) -> Iterator[int]:
    head = f"HTTP/1.1 {request.param} X\r\nContent-Type: application/json\r\nContent-Length: {len(NESTED)}\r\n"
    answer = (head + "Connection: close\r\n\r\n").encode() + NESTED
    with raw_server(lambda conn, _stop: conn.sendall(answer)) as port:
        yield port


@pytest.mark.parametrize(
    "command", [("doctor", "nest"), ("bench", "nest", "-n", "1", "--no-stream"), ("bench", "nest", "-n", "1")]
)
def test_deeply_nested_answers_are_named_not_crashed_on(home: Home, nested_server: int, command) -> None:
    home.run("profile", "add", "nest", "--base-url", f"http://127.0.0.1:{nested_server}/v1", "--model", "m", "--no-key")
    result = home.run(*command, "--timeout", "10", check=None)
    assert result.returncode in (0, 1), (result.returncode, result.stderr[-600:])
    assert "internal error" not in result.stderr and "Traceback" not in result.stderr


def test_detect_names_a_deeply_nested_model_list(home: Home, nested_server: int) -> None:
    result = home.run(
        "profile", "add", "nest", "--base-url", f"http://127.0.0.1:{nested_server}/v1", "--detect", check=2
    )
    assert "internal error" not in result.stderr and "Traceback" not in result.stderr


DEEP_TOML = 'base_url = "http://127.0.0.1:9/v1"\nmodel = "m"\nx = ' + "[" * 5000 + "\n"


def test_a_deeply_nested_team_file_is_refused_cleanly(home: Home) -> None:
    team = home.write("team.toml", DEEP_TOML)
    result = home.run("profile", "add", "team", "--from", str(team), check=2)
    assert "nested too deeply" in result.stderr and "internal error" not in result.stderr


def test_a_deeply_nested_codex_config_is_reported_cleanly(home: Home) -> None:
    home.write(".codex/config.toml", 'model = "m"\nx = ' + "[" * 5000 + "\n")
    result = home.run("switch", "local", "--agent", "codex", check=2)
    assert "nested too deeply" in result.stderr and "internal error" not in result.stderr
