"""benchmarks/route_overhead.py runs end to end against the real LiteLLM (figures not checked: loopback on a
shared machine), says which commands it ran, stops its route, and leaves the HOME it was started with alone."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.realservers  # it needs LiteLLM (.ci/install-servers: LITELLM_PYTHON)

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def test_route_overhead_runs_and_stops_its_route(tmp_path):
    if not os.environ.get("LITELLM_PYTHON"):
        pytest.fail("needs LITELLM_PYTHON: run `bash .ci/install-servers FILE` and export the lines it writes")
    home = tmp_path / "home"
    home.mkdir()
    environ = {**os.environ, "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config")}
    environ.pop("AGENTCFG_LITELLM", None)
    argv = [sys.executable, str(BENCHMARKS / "route_overhead.py"), "-n", "2", "--json"]
    done = subprocess.run(argv, env=environ, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert list(home.iterdir()) == [], "a benchmark wrote to the HOME it was started with"
    for name in ("route", "primary_direct", "fallback_direct"):
        assert result["ttft_ms"][name]["n"] == 2, result["ttft_ms"]
    assert isinstance(result["added_ttft_ms_p50"], float)
    assert any(" route serve bench-route" in command for command in result["commands"]), result["commands"]
    # stopped: no LiteLLM on this route's config is left running
    left = subprocess.run(["pgrep", "-f", "route-overhead-.*/litellm.yaml"], capture_output=True, text=True)
    assert left.stdout.strip() == "", left.stdout
