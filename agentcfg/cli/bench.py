"""`bench`: latency and throughput of profiles, side by side."""

from __future__ import annotations

import sys
from typing import Any

import click

from agentcfg.cli import base

# -- bench -----------------------------------------------------------------------------------------

TOKENS_MOST = 1_048_576  # tokens one request asks for or sends: about the largest window served today


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
def bench(names: tuple[str, ...], as_json: bool, csv_file: str | None, legs: bool, **given: Any) -> None:
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
    from agentcfg import report
    from agentcfg.bench import choose, summary

    environ = base.environ()
    targets, settings, notes = choose.prepare(names, environ, legs=legs, csv_file=csv_file, **given)
    base.emit_notes(notes)
    unicode = (getattr(sys.stdout, "encoding", "") or "").lower().replace("-", "") == "utf8"
    result = _measure(targets, settings, unicode)
    document = summary.run_dict(result)
    _show(result, document, csv_file, as_json, report.use_colour(environ), unicode)
    base.finish(summary.exit_status(document))


def _measure(targets: list[Any], settings: Any, unicode: bool) -> Any:
    """The run, with a progress line on a terminal's stderr (cleared after, Ctrl-C too)."""
    from agentcfg.bench import runner

    progress = _ProgressLine(unicode) if sys.stderr.isatty() else None
    try:
        return runner.run(targets, settings, progress)
    finally:
        if progress:
            progress.clear()


def _show(
    result: Any, document: dict[str, Any], csv_file: str | None, as_json: bool, colour: bool, unicode: bool
) -> None:
    """The figures: --csv's rows to its file, the document as JSON or text, and a note after a Ctrl-C."""
    from agentcfg import report
    from agentcfg.bench import render

    if csv_file:
        with open(csv_file, "w", encoding="utf-8", newline="") as out:
            out.write(render.csv_text(result))
    if as_json:
        click.echo(report.dumps(document))
    else:
        click.echo(render.text(document, colour, unicode))
    if result.interrupted == "ctrl-c":
        base.emit_notes(["interrupted: the figures above are the requests that finished before Ctrl-C"])
