"""`bench`: latency and throughput of profiles, side by side."""

from __future__ import annotations

import sys

import click

from agentcfg.cli import base
from agentcfg.errors import AgentcfgError

# -- bench -----------------------------------------------------------------------------------------

TOKENS_MOST = 1_048_576  # tokens one request asks for or sends: about the largest window served today
# Prompt tokens in flight at once (--concurrency x --prompt-tokens): each request holds its prompt as text and as
# JSON, ~10 bytes a token, so at most ~350 MB.
IN_FLIGHT_MOST = 2**25


def _check_in_flight(concurrency: int, prompt_tokens: int) -> None:
    if concurrency * prompt_tokens > IN_FLIGHT_MOST:
        raise AgentcfgError(
            f"--concurrency {concurrency:,} with --prompt-tokens {prompt_tokens:,} holds "
            f"{concurrency * prompt_tokens:,} prompt tokens in memory at once; at most {IN_FLIGHT_MOST:,}",
            hint=f"Run fewer at once (`agentcfg bench ... -c {max(1, IN_FLIGHT_MOST // prompt_tokens)}`) or send "
            "shorter prompts.",
        )


def _with_legs(chosen: list, legs: bool, environ: dict[str, str]) -> tuple[list, list[str]]:
    """With --legs, each route followed by its legs (each profile once); the notes that go with it."""
    routes = [p for p in chosen if p.route is not None]
    if not legs:
        return chosen, [
            f"{p.name} is a route: `agentcfg bench {p.name} --legs` puts its legs beside it" for p in routes
        ]
    if not routes:
        return chosen, ["--legs: none of these profiles is a route (`agentcfg route add` makes one)"]
    from agentcfg.route import control

    expanded: dict[str, object] = {}
    for found in chosen:
        expanded.setdefault(found.name, found)
        if found.route is not None:
            for leg in control.route_and_legs(found.name, environ)[1]:
                expanded.setdefault(leg.name, leg)
    return list(expanded.values()), []


class _ProgressLine:
    """One status line on a terminal's stderr, rewritten in place at most ten times a second."""

    def __init__(self, unicode: bool) -> None:
        self.unicode, self.width, self.last = unicode, 0, 0.0

    def __call__(self, profile: str, mode: str, done: int, total: int, failed: int) -> None:
        import time

        from agentcfg.bench.render import progress_line

        now = time.monotonic()
        if 0 < done < total and now - self.last < 0.1:
            return
        self.last = now
        line = progress_line(profile, mode, done, total, failed, self.unicode)
        click.echo("\r" + line.ljust(self.width), err=True, nl=False)
        self.width = max(self.width, len(line))

    def clear(self) -> None:
        if self.width:
            click.echo("\r" + " " * self.width + "\r", err=True, nl=False)


@click.command()
@click.argument("names", nargs=-1, metavar="[PROFILE]...", shell_complete=base.complete_profile)
@click.option("--requests", "-n", type=base.Int(1, 10_000), default=10, show_default=True, help="Requests per mode.")
@click.option("--concurrency", "-c", type=base.Int(1, 1024), default=1, show_default=True, help="In flight at once.")
@click.option(
    "--max-tokens", type=base.Int(2, TOKENS_MOST), default=256, show_default=True, help="Output tokens per request."
)
@click.option(
    "--prompt-tokens", type=base.Int(1, TOKENS_MOST), default=512, show_default=True, help="Prompt size, roughly."
)
@click.option("--stream", "mode", flag_value="stream", default=True, help="Streamed requests (the default).")
@click.option("--no-stream", "mode", flag_value="non_stream", help="Non-streamed requests only.")
@click.option("--both", "mode", flag_value="both", help="Both, side by side, with their ratio.")
@base.json_option("Print the figures as JSON.")
@click.option("--csv", "csv_file", metavar="FILE", help="Also write one row per request to FILE.")
@click.option(
    "--timeout", type=base.Float(0.1, 86_400), default=120.0, show_default=True, help="Per request, in seconds."
)
@click.option(
    "--deadline", type=base.Float(1, 604_800), default=900.0, show_default=True, help="For the whole run, in seconds."
)
@click.option("--legs", is_flag=True, help="A route's legs too, each after its route: what the router adds.")
def bench(
    names: tuple[str, ...],
    requests: int,
    concurrency: int,
    max_tokens: int,
    prompt_tokens: int,
    mode: str,
    as_json: bool,
    csv_file: str | None,
    timeout: float,
    deadline: float,
    legs: bool,
) -> None:
    """Time to first token, inter-token latency and tokens per second of PROFILE(s), side by side.

    \b
    agentcfg bench                         the profile of the last switch (else local), streamed
    agentcfg bench local taotoken --both   two profiles, streamed and not, with the ratio
    agentcfg bench local -n 50 -c 8 --json --csv runs.csv
    agentcfg bench home --legs             a route, then each of its legs directly

    Against vLLM, its /metrics view (time inside the engine) is shown beside the client's.
    Exit status: 0 all requests answered, 1 some failed or did not finish, 2 bad input,
    130 Ctrl-C (after printing what was measured).
    """
    from agentcfg import profiles, report
    from agentcfg.bench import render, runner, summary
    from agentcfg.bench.measure import MODES

    _check_in_flight(min(concurrency, requests), prompt_tokens)  # before any profile or key is read
    environ = base.environ()
    chosen = [profiles.get(n, environ) for n in dict.fromkeys(names or [runner.default_profile(environ)])]
    notes = [] if names else [f"benchmarking {chosen[0].name} (name profiles to choose: agentcfg bench PROFILE...)"]
    chosen, legs_notes = _with_legs(chosen, legs, environ)
    notes += legs_notes
    targets = []
    for found in chosen:
        target, note = runner.target(found, environ)
        targets.append(target)
        notes += [note] if note else []
    if concurrency > requests:
        notes.append(f"--concurrency {concurrency} is more than --requests {requests}: {requests} run at once")
    if csv_file:
        try:
            open(csv_file, "a", encoding="utf-8").close()  # fail now, not after minutes of measuring
        except OSError as exc:
            raise AgentcfgError(
                f"cannot write --csv {csv_file}: {exc.strerror}",
                hint="Give a file in a directory you can write: agentcfg bench ... --csv ./bench.csv",
            ) from None
    settings = summary.Settings(
        requests=requests,
        concurrency=min(concurrency, requests),
        max_tokens=max_tokens,
        prompt_tokens=prompt_tokens,
        modes=MODES if mode == "both" else (mode,),
        timeout=timeout,
        deadline=deadline,
    )
    base.emit_notes(notes)
    unicode = (getattr(sys.stdout, "encoding", "") or "").lower().replace("-", "") == "utf8"
    progress = _ProgressLine(unicode) if sys.stderr.isatty() else None
    try:
        result = runner.run(targets, settings, progress)
    finally:
        if progress:
            progress.clear()
    document = summary.run_dict(result)
    if csv_file:
        with open(csv_file, "w", encoding="utf-8", newline="") as out:
            out.write(render.csv_text(result))
    if as_json:
        click.echo(report.dumps(document))
    else:
        click.echo(render.text(document, report.use_colour(environ), unicode))
    if result.interrupted == "ctrl-c":
        base.emit_notes(["interrupted: the figures above are the requests that finished before Ctrl-C"])
    base.finish(summary.exit_status(document))
