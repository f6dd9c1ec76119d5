"""From measured requests to the figures and warnings `agentcfg bench` reports: the JSON document.

Every other output (the table, the CSV) is rendered from what is computed here, so the numbers on
screen and in `--json` are the same numbers.
"""

from __future__ import annotations

import statistics
from collections import Counter
from dataclasses import field
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from agentcfg.bench import metrics
from agentcfg.bench.measure import MODES, NON_STREAM, STREAM, Record
from agentcfg.bench.stats import figure, histogram
from agentcfg.errors import Exit
from agentcfg.lazyclass import dataclass

MIN_SAMPLES = 10  # fewer successful requests than this: p90/p99 are little more than the maximum
BURST_CHUNKS = 2  # a stream whose tokens all came in this many chunks or fewer arrived in one burst
MULTI_TOKEN_CHUNKS = 1.5  # tokens per chunk (median) from which ITL and TPOT part ways
EARLY_STOP = 0.9  # median output below this share of max_tokens: the answers stopped early


@dataclass(frozen=True)
class Settings:
    """What `agentcfg bench` sends: how many requests, how many at once, how long each."""

    requests: int = 10
    concurrency: int = 1
    max_tokens: int = 256
    prompt_tokens: int = 512
    modes: tuple[str, ...] = (STREAM,)
    timeout: float = 120.0  # per request, seconds
    deadline: float = 900.0  # the whole run, seconds


@dataclass
class Phase:
    """One profile in one mode: `requests` requests sent with the same settings."""

    mode: str
    planned: int = 0  # requests this phase was to send (0: it never started)
    records: list[Record] = field(default_factory=list)  # finished or failed; cancelled ones are absent
    wall: float = 0.0  # first request sent -> last one finished
    skipped: str | None = None  # why no request was sent (the server did not answer the warm-up)
    server: dict[str, metrics.Histogram | None] | None = None  # vLLM's histograms over the phase


@dataclass
class ProfileRun:
    """One profile's endpoint in a bench run, and what was learnt of its server."""

    name: str
    base_url: str
    model: str
    proxy: str | None = None
    ignore_eos: bool = False  # sent because the server is vLLM (its /models says owned_by "vllm")
    metrics_url: str | None = None  # where vLLM's /metrics answered, if it did
    phases: dict[str, Phase] = field(default_factory=dict)


@dataclass
class Run:
    """A whole bench run: its settings and each profile's part."""

    settings: Settings
    profiles: list[ProfileRun]
    interrupted: str | None = None  # "ctrl-c" or "deadline"
    elapsed: float = 0.0


# -- one mode ------------------------------------------------------------------------------------------


def _ms(values: Any) -> dict[str, Any]:
    return figure((v * 1000 for v in values if v is not None), digits=3)


def _rate(values: Any) -> dict[str, Any]:
    return figure((v for v in values if v is not None), digits=2)


def _warning(wid: str, message: str) -> dict[str, str]:
    return {"id": wid, "message": message}


def warnings(phase: Phase, settings: Settings, ignore_eos: bool) -> list[dict[str, str]]:
    """What makes this phase's figures less than trustworthy, each with a stable id."""
    ok = [r for r in phase.records if r.ok]
    found: list[dict[str, str]] = []
    if 0 < len(ok) < MIN_SAMPLES:
        found.append(
            _warning(
                "few-samples",
                f"only {len(ok)} request{'s' if len(ok) != 1 else ''} succeeded: p90 and p99 of fewer than "
                f"{MIN_SAMPLES} samples are little more than the maximum (use --requests {MIN_SAMPLES} or more)",
            )
        )
    if phase.mode == STREAM and ok:
        bursts = [r for r in ok if (r.output_tokens or 0) > BURST_CHUNKS + 1 and len(r.token_times) <= BURST_CHUNKS]
        per_chunk = statistics.median((r.output_tokens or 0) / max(1, len(r.token_times)) for r in ok)
        if 2 * len(bursts) >= len(ok):
            found.append(
                _warning(
                    "burst",
                    f"the stream arrived in one burst ({len(bursts)} of {len(ok)} requests had all their tokens in "
                    f"at most {BURST_CHUNKS} chunks): something between here and the model buffers it (a proxy, "
                    "a gateway); TTFT, ITL and the decode rate describe that buffer, not the model",
                )
            )
        elif per_chunk >= MULTI_TOKEN_CHUNKS:
            found.append(
                _warning(
                    "multi-token-chunks",
                    f"chunks carry {per_chunk:.1f} tokens each (median): ITL counts one gap per chunk, as vLLM's "
                    "benchmark does, so TPOT is the per-token figure to read",
                )
            )
    if missing := [r for r in ok if r.usage_tokens is None]:
        how = (
            "counted one per token chunk, which undercounts chunks that carry several"
            if phase.mode == STREAM
            else "estimated from the text length (about 4 characters per token)"
        )
        found.append(
            _warning(
                "no-usage",
                f"the server reported no usage for {len(missing)} of {len(ok)} requests: their output tokens are {how}",
            )
        )
    outputs = [r.output_tokens or 0 for r in ok]
    if outputs and statistics.median(outputs) < EARLY_STOP * settings.max_tokens:
        why = (
            "even with ignore_eos: is --max-tokens larger than the model's window allows?"
            if ignore_eos
            else "(bench asks only vLLM to ignore end-of-sequence); rates over short answers are noisy"
        )
        found.append(
            _warning(
                "early-stop",
                f"answers stopped before max_tokens (median {statistics.median(outputs):g} of "
                f"{settings.max_tokens} tokens) {why}",
            )
        )
    if phase.server and (served := metrics.served(phase.server)) > len(phase.records):
        found.append(
            _warning(
                "other-traffic",
                f"the server answered {served} requests during this run, {served - len(phase.records)} more than "
                "bench sent: other clients' requests are in its figures",
            )
        )
    return found


def _errors(records: list[Record]) -> list[dict[str, Any]]:
    counts = Counter(r.error or "no answer" for r in records if not r.ok)
    return [{"error": error, "count": count} for error, count in counts.most_common()]


def mode_dict(phase: Phase, settings: Settings, ignore_eos: bool = False, metrics_url: str | None = None) -> dict:
    """One profile in one mode. Every key is present even when nothing was measured (n 0, nulls)."""
    ok = [r for r in phase.records if r.ok]
    gaps = [gap * 1000 for r in ok for gap in r.itl]
    total_tokens = sum(r.output_tokens or 0 for r in ok)
    server: dict[str, Any] | None = None
    if phase.server is not None:
        server = {"url": metrics_url, "requests": metrics.served(phase.server)}
        server |= {name: metrics.server_figure(phase.server.get(name)) for name in metrics.HISTOGRAMS}
    return {
        "requests": phase.planned,
        "ok": len(ok),
        "failed": len(phase.records) - len(ok),
        "cancelled": max(0, phase.planned - len(phase.records)),
        "wall_s": round(phase.wall, 3),
        "throughput_tok_s": round(total_tokens / phase.wall, 2) if phase.wall and ok else None,
        "ttft_ms": _ms(r.ttft for r in ok),
        "itl_ms": figure(gaps, digits=3),
        "tpot_ms": _ms(r.tpot for r in ok),
        "e2e_ms": _ms(r.e2e for r in ok),
        "decode_tok_s": _rate(r.decode_tok_s for r in ok),
        "tok_s": _rate(r.tok_s for r in ok),
        "output_tokens": figure((r.output_tokens for r in ok if r.output_tokens is not None), digits=1),
        "prompt_tokens": figure((r.prompt_tokens for r in ok if r.prompt_tokens is not None), digits=1),
        "usage_reported": sum(r.usage_tokens is not None for r in ok),
        "itl_histogram": [
            {"from_ms": round(low, 3), "to_ms": round(high, 3), "count": count} for low, high, count in histogram(gaps)
        ],
        "server": server,
        "errors": [{"error": phase.skipped, "count": phase.planned}] if phase.skipped else _errors(phase.records),
        "warnings": warnings(phase, settings, ignore_eos),
    }


# -- the whole run -----------------------------------------------------------------------------------------


def ratio(stream: dict[str, Any], non_stream: dict[str, Any]) -> dict[str, float | None] | None:
    """Stream over non-stream, medians: E2E above 1 or tok/s below 1 is time the stream loses on the way."""
    if not stream["ok"] or not non_stream["ok"]:
        return None

    def divide(name: str) -> float | None:
        top, bottom = stream[name]["median"], non_stream[name]["median"]
        return round(top / bottom, 3) if top is not None and bottom else None

    return {"e2e_ms": divide("e2e_ms"), "tok_s": divide("tok_s")}


def without_credentials(url: str | None) -> str | None:
    """A proxy URL without its user:password part, fit to print."""
    if not url:
        return url
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    return urlunsplit(parts._replace(netloc="****@" + parts.netloc.rsplit("@", 1)[1]))


def run_dict(run: Run) -> dict[str, Any]:
    """The `--json` document: settings, then for each profile and mode the figures and warnings."""
    settings = run.settings
    profiles: dict[str, Any] = {}
    failed = False
    for profile in run.profiles:
        entry: dict[str, Any] = {
            "base_url": profile.base_url,
            "model": profile.model,
            "proxy": without_credentials(profile.proxy),
            "ignore_eos": profile.ignore_eos,
            "metrics_url": profile.metrics_url,
        }
        for mode in MODES:
            phase = profile.phases.get(mode, Phase(mode))
            entry[mode] = mode_dict(phase, settings, profile.ignore_eos, profile.metrics_url)
            failed = failed or bool(entry[mode]["failed"] or entry[mode]["cancelled"])
        entry["stream_vs_non_stream"] = ratio(entry[STREAM], entry[NON_STREAM])
        profiles[profile.name] = entry
    return {
        "settings": {
            "requests": settings.requests,
            "concurrency": settings.concurrency,
            "max_tokens": settings.max_tokens,
            "prompt_tokens": settings.prompt_tokens,
            "modes": list(settings.modes),
            "timeout_s": settings.timeout,
            "deadline_s": settings.deadline,
        },
        "profiles": profiles,
        "interrupted": run.interrupted,
        "elapsed_s": round(run.elapsed, 3),
        "ok": not failed and run.interrupted is None,
    }


def exit_status(document: dict[str, Any]) -> Exit:
    """INTERRUPTED (130) after Ctrl-C, FAILED (1) when a request failed or did not run, else OK (0)."""
    if document["interrupted"] == "ctrl-c":
        return Exit.INTERRUPTED
    return Exit.OK if document["ok"] else Exit.FAILED
