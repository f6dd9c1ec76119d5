#!/usr/bin/env python3
"""What a route's router (LiteLLM) adds to each request on loopback: time to first token through the route vs
the primary directly.

Two loopback test servers with a fixed schedule (tests/scheduled_server.py: first token `--ttft` s after the
request, then one token every `--itl` s) are the legs: the primary, and a fallback a route must have (it gets no
request while the primary answers). In a throw-away HOME: `agentcfg route add`, `route serve` (the real
LiteLLM), then `agentcfg bench ROUTE --legs -n N --csv`: the route, then each leg directly, N streamed requests
each, one after another. The figures are the client's TTFT per request (bench's CSV): p50 and p25-p75 for the
route and for the primary, and the difference of the medians. The route is always stopped at the end.

    python benchmarks/route_overhead.py [-n 50] [--runs 1] [--ttft 0.02] [--json]

LiteLLM: `route serve` runs with the `agentcfg` of $LITELLM_PYTHON's venv (.ci/install-servers: agentcfg[route]),
else with this one and $AGENTCFG_LITELLM, else with this one (its own venv has the `route` extra).
Method: each round (--runs) is one `bench` command after one untimed round of 3 requests (LiteLLM's first
requests are slower); rounds are pooled. Within a round the route's requests come before the legs', not
interleaved: a change of load during a round moves one side only, so compare rounds too (`rounds` in --json).
"""

from __future__ import annotations

import argparse
import csv
import datetime
import json
import os
import platform
import secrets
import shlex
import socket
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(1, str(Path(__file__).resolve().parents[1]))

import _timing

ROUTE, PRIMARY, FALLBACK = "bench-route", "bench-primary", "bench-fallback"
MODEL = "DeepSeek-V4-Flash"
MAX_TOKENS = 16  # TTFT is the figure; a short answer keeps each request's tail out of the next one's way


def serving_agentcfg(environ: Mapping[str, str]) -> tuple[str, dict[str, str]]:
    """The `agentcfg` that runs `route serve`, and the variables it needs (see the module's docstring)."""
    if python := environ.get("LITELLM_PYTHON"):
        beside = Path(python).with_name("agentcfg")
        if beside.exists():
            return str(beside), {}
    if litellm := environ.get("AGENTCFG_LITELLM"):
        return _timing.agentcfg_script(), {"AGENTCFG_LITELLM": litellm}
    return _timing.agentcfg_script(), {}


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def quartiles_ms(values: Sequence[float]) -> dict[str, float | int | None]:
    if not values:
        return {"p25": None, "p50": None, "p75": None, "n": 0}
    low, mid, high = _timing.quartiles(values)
    return {"p25": round(low, 2), "p50": round(mid, 2), "p75": round(high, 2), "n": len(values)}


def _via_router(leg: object) -> int:
    """The chat requests a leg got from the router: LiteLLM sends them with the OpenAI SDK (bench with httpx)."""
    return sum(
        1
        for method, path, headers, _ in leg.requests  # type: ignore[attr-defined]
        if method == "POST"
        and path.endswith("/completions")
        and "openai" in (headers.get("User-Agent") or headers.get("user-agent") or "").lower()
    )


def ttfts(csv_file: Path) -> dict[str, list[float]]:
    """TTFT in ms of every answered request, by profile."""
    found: dict[str, list[float]] = {}
    with open(csv_file, encoding="utf-8", newline="") as rows:
        for row in csv.DictReader(rows):
            if row["ok"] == "1" and row["ttft_ms"]:
                found.setdefault(row["profile"], []).append(float(row["ttft_ms"]))
    return found


class Commands:
    """Runs agentcfg in the throw-away HOME; keeps each command's text (printed short) for the report."""

    def __init__(self, environ: dict[str, str], root: Path, names: dict[str, str]) -> None:
        self.environ, self.root, self.names, self.shown = environ, root, names, []

    def run(self, argv: list[str], extra: Mapping[str, str] | None = None, timeout: float = 600) -> str:
        words = [f"{k}={v}" for k, v in (extra or {}).items()] + argv
        text = shlex.join(words).replace(str(self.root), "$T")
        for long, short in self.names.items():
            text = text.replace(long, short)
        self.shown.append(text)
        done = subprocess.run(argv, env={**self.environ, **(extra or {})}, capture_output=True, text=True,
                              timeout=timeout)  # fmt: skip
        if done.returncode != 0:
            raise _timing.BenchError(
                f"{shlex.join(argv)}: exit {done.returncode}\n{done.stdout[-800:]}{done.stderr[-800:]}"
            )
        return done.stdout


def measure(args: argparse.Namespace) -> dict[str, object]:
    from tests.scheduled_server import ScheduledServer

    agentcfg = _timing.agentcfg_script()
    server_agentcfg, serve_env = serving_agentcfg(os.environ)
    with tempfile.TemporaryDirectory(prefix="route-overhead-") as tmp:
        root = Path(tmp)
        (root / "run").mkdir(mode=0o700)
        environ = _timing.user_environment(root, os.environ.get("PATH", "/usr/bin:/bin"))
        environ["NO_PROXY"] = "127.0.0.1,localhost"
        # Every route has a router key: here one exported in the route's variable, with no keyring (so none of
        # the user's keyrings gets an entry); `route add`, `serve` and `bench` read it there
        environ["PYTHON_KEYRING_BACKEND"] = "keyring.backends.fail.Keyring"
        environ[ROUTE.upper().replace("-", "_") + "_ROUTER_KEY"] = "sk-agentcfg-" + secrets.token_urlsafe(32)
        commands = Commands(environ, root, {server_agentcfg: "serve-agentcfg", agentcfg: "agentcfg"})
        schedule = {"ttft": args.ttft, "itl": args.itl, "role_first": False}
        with ScheduledServer(**schedule) as primary, ScheduledServer(**schedule) as fallback:
            for name, leg in ((PRIMARY, primary), (FALLBACK, fallback)):
                commands.run([agentcfg, "profile", "add", name, "--base-url", leg.base_url, "--model", MODEL,
                              "--no-key", "--context-window", "65536"])  # fmt: skip
            commands.run([agentcfg, "route", "add", ROUTE, "--primary", PRIMARY, "--fallback", FALLBACK,
                          "--port", str(_free_port())])  # fmt: skip
            try:
                commands.run([server_agentcfg, "route", "serve", ROUTE, "--json"], serve_env)
                bench = [agentcfg, "bench", ROUTE, "--legs", "--max-tokens", str(MAX_TOKENS), "--json"]
                if args.warm_up:
                    commands.run([*bench, "-n", "3", "--csv", str(root / "warm-up.csv")])
                pooled: dict[str, list[float]] = {}
                rounds = []
                for number in range(args.runs):
                    csv_file = root / f"round-{number}.csv"
                    commands.run([*bench, "-n", str(args.requests), "--csv", str(csv_file)])
                    found = ttfts(csv_file)
                    rounds.append({name: quartiles_ms(values) for name, values in found.items()})
                    for name, values in found.items():
                        pooled.setdefault(name, []).extend(values)
            finally:
                subprocess.run([agentcfg, "route", "stop", ROUTE], env=environ, capture_output=True, timeout=60)
            routed = {name: _via_router(leg) for name, leg in (("primary", primary), ("fallback", fallback))}
    if routed["fallback"] or not routed["primary"]:
        raise _timing.BenchError(
            f"the router sent {routed['fallback']} requests to the fallback and {routed['primary']} to the primary: "
            "the route failed over, so its figures are not the primary's"
        )
    figures = {name: quartiles_ms(pooled.get(name, [])) for name in (ROUTE, PRIMARY, FALLBACK)}
    route_p50, primary_p50 = figures[ROUTE]["p50"], figures[PRIMARY]["p50"]
    added = round(route_p50 - primary_p50, 2) if route_p50 is not None and primary_p50 is not None else None
    return {
        "title": "route overhead: TTFT through the route's router (LiteLLM) vs the primary directly, loopback",
        "date": datetime.date.today().isoformat(),
        "machine": f"{platform.system()} {platform.machine()}, {os.cpu_count()} cores",
        "requests_per_round": args.requests,
        "runs": args.runs,
        "schedule": {"ttft_s": args.ttft, "itl_s": args.itl, "max_tokens": MAX_TOKENS},
        "legend": [f"agentcfg = {agentcfg}", f"serve-agentcfg = {server_agentcfg}", "$T = a temporary HOME"],
        "commands": commands.shown,
        "ttft_ms": {"route": figures[ROUTE], "primary_direct": figures[PRIMARY], "fallback_direct": figures[FALLBACK]},
        "added_ttft_ms_p50": added,
        "rounds": rounds,
        "requests_via_router": routed,  # the route's (LiteLLM's OpenAI client), warm-ups included: none to the fallback
    }


def print_text(result: Mapping[str, object]) -> None:
    print(f"{result['title']}\n{result['date']}, {result['machine']}; {result['runs']} round(s) of "
          f"{result['requests_per_round']} streamed requests per profile; legs: {result['schedule']}")  # fmt: skip
    for line in result["legend"]:  # type: ignore[attr-defined]
        print(f"  {line}")
    for command in result["commands"]:  # type: ignore[attr-defined]
        print(f"  $ {command}")
    print(f"\n{'TTFT, ms':<28} {'p50':>8} {'p25-p75':>16} {'n':>5}")
    for name, figure in result["ttft_ms"].items():  # type: ignore[attr-defined]
        spread = f"{figure['p25']}-{figure['p75']}" if figure["n"] else "-"
        print(f"{name:<28} {figure['p50'] if figure['n'] else '-':>8} {spread:>16} {figure['n']:>5}")
    print(f"added by the router (route p50 - primary p50): {result['added_ttft_ms_p50']} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", "--requests", type=int, default=50, help="Requests per profile per round (default 50).")
    parser.add_argument("--runs", type=int, default=1, help="Rounds, each one `bench` command (default 1).")
    parser.add_argument("--ttft", type=float, default=0.02, help="The legs' time to first token, s (default 0.02).")
    parser.add_argument("--itl", type=float, default=0.001, help="The legs' time between tokens, s (default 0.001).")
    parser.add_argument("--no-warm-up", dest="warm_up", action="store_false", help="No untimed round first.")
    parser.add_argument("--json", action="store_true", help="The figures and commands as JSON.")
    args = parser.parse_args()
    result = measure(args)
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print_text(result)


if __name__ == "__main__":
    _timing.main(main)
