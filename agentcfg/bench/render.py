"""`agentcfg bench` for people: a compact table per profile, the ITL histogram, profiles side by
side, warnings; and for plotting, one CSV row per request. Text is rendered from the JSON document
(summary.run_dict), so both always show the same numbers."""

from __future__ import annotations

import csv
import io
from typing import Any

from agentcfg.bench.measure import MODES, NON_STREAM, STREAM
from agentcfg.bench.summary import Run
from agentcfg.redact import mask_text
from agentcfg.report import paint

MODE_LABELS = {STREAM: "stream", NON_STREAM: "non-stream"}
ROWS = (
    ("TTFT ms", "ttft_ms"),
    ("ITL ms", "itl_ms"),
    ("TPOT ms", "tpot_ms"),
    ("E2E ms", "e2e_ms"),
    ("tok/s", "tok_s"),
    ("decode tok/s", "decode_tok_s"),
    ("output tokens", "output_tokens"),
)
SERVER_ROWS = (("TTFT ms", "ttft_ms"), ("ITL ms", "itl_ms"), ("E2E ms", "e2e_ms"))
STATS = ("median", "p90", "p99", "max", "n")
RATIO_ROWS = {"e2e_ms", "tok_s"}
BAR_WIDTH = 30
CSV_COLUMNS = (
    "profile",
    "mode",
    "request",
    "ok",
    "error",
    "sent_s",
    "ttft_ms",
    "e2e_ms",
    "tpot_ms",
    "decode_tok_s",
    "tok_s",
    "output_tokens",
    "usage_reported",
    "prompt_tokens",
    "chunks",
    "finish_reason",
    "itl_ms",
)


def number(value: float | None) -> str:
    """Enough digits to tell a 0.2 ms timing error apart, no more: 0.21, 10.35, 211.4, 12,532."""
    if value is None:
        return "-"
    if abs(value) < 100:
        return f"{value:.2f}"
    if abs(value) < 10000:
        return f"{value:.1f}"
    return f"{value:,.0f}"


def _align(rows: list[list[str]], left: int = 1) -> list[str]:
    """Columns padded to their widest cell: the first `left` left-aligned, the rest right-aligned."""
    widths = [max(len(row[i]) for row in rows if i < len(row)) for i in range(max(map(len, rows)))]
    lines = []
    for row in rows:
        cells = [cell.ljust(widths[i]) if i < left else cell.rjust(widths[i]) for i, cell in enumerate(row)]
        lines.append("  ".join(cells).rstrip())
    return lines


def _cells(fig: dict[str, Any] | None, whole: bool = False) -> list[str]:
    """A figure's columns; `whole`: counts (tokens), shown without decimals when they have none."""
    if not fig or not fig["n"]:
        return ["-", "", "", "", ""]

    def shown(value: float) -> str:
        return f"{value:g}" if whole and float(value).is_integer() else number(value)

    return [shown(fig[s]) if s != "n" else str(fig["n"]) for s in STATS]


def _paint(text: str, colour: bool) -> str:
    return paint(text, "modify", colour)  # yellow, as doctor's warnings


def histogram_text(bins: list[dict[str, Any]], unicode: bool = True) -> list[str]:
    """A small horizontal bar chart of the inter-token gaps."""
    if not bins:
        return []
    top = max(b["count"] for b in bins)
    mark = "█" if unicode else "#"
    dash = "–" if unicode else "-"
    rows = []
    for b in bins:
        label = f"{number(b['from_ms'])}{dash}{number(b['to_ms'])} ms"
        bar = mark * max(1 if b["count"] else 0, round(BAR_WIDTH * b["count"] / top))
        rows.append([f"    {label}", bar.ljust(BAR_WIDTH), str(b["count"])])
    widths = [max(len(r[0]) for r in rows), BAR_WIDTH]
    return [f"{r[0].rjust(widths[0])}  {r[1]}  {r[2]}" for r in rows]


def _outcome(mode: str, data: dict[str, Any]) -> str:
    text = f"{MODE_LABELS[mode]}: {data['ok']}/{data['requests']} ok in {data['wall_s']:.2f} s"
    if data["throughput_tok_s"] is not None:
        text += f", {number(data['throughput_tok_s'])} tok/s overall"
    if data["failed"]:
        first = data["errors"][0]["error"] if data["errors"] else "?"
        text += f", {data['failed']} failed ({first}{'; ...' if len(data['errors']) > 1 else ''})"
    if data["cancelled"]:
        text += f", {data['cancelled']} not finished"
        if data["errors"] and not data["failed"]:
            text += f" ({data['errors'][0]['error']})"
    return text


def _server_rows(entry: dict[str, Any], modes: list[str]) -> list[str]:
    """vLLM's view next to the client's: means (exact from a histogram) and what lies outside the model."""
    rows = [["vLLM /metrics", "mean", "~median", "~p90", "~p99", "n", "client mean", "outside vLLM"]]
    for mode in modes:
        server = entry[mode]["server"]
        for label, key in SERVER_ROWS:
            fig = server[key] if server else None
            if not fig or not fig["n"]:
                continue
            client = entry[mode][key]["mean"]
            outside = client - fig["mean"] if client is not None and fig["mean"] is not None else None
            rows.append(
                [
                    f"{label} ({MODE_LABELS[mode]})",
                    *(number(fig[s]) for s in ("mean", "median", "p90", "p99")),
                    str(fig["n"]),
                    number(client),
                    "-" if outside is None else ("+" if outside >= 0 else "") + number(outside),
                ]
            )
    return _align(rows) if len(rows) > 1 else []


def profile_text(name: str, entry: dict[str, Any], modes: list[str], colour: bool, unicode: bool) -> list[str]:
    """One profile: figures per mode side by side, their ratio, vLLM's own view, the ITL histogram."""
    eos = ", ignore_eos sent (vLLM)" if entry["ignore_eos"] else ""
    proxy = f", through proxy {entry['proxy']}" if entry["proxy"] else ""
    lines = [f"{name}: {entry['model']} at {entry['base_url']}{eos}{proxy}"]
    both = len(modes) == 2
    titles, header = [""], [""]
    for mode in modes:
        titles += [MODE_LABELS[mode], "", "", "", ""]
        header += list(STATS)
    divide, times = ("÷", "×") if unicode else ("/", "x")
    rows = [titles + ([f"stream {divide}"] if both else []), header + (["non-stream"] if both else [])]
    ratio = entry["stream_vs_non_stream"] or {}
    for label, key in ROWS:
        row = [label]
        for mode in modes:
            row += _cells(entry[mode][key], whole=key == "output_tokens")
        if both:
            row.append(f"{ratio[key]:.2f}{times}" if key in RATIO_ROWS and ratio.get(key) is not None else "")
        rows.append(row)
    lines += ["  " + line for line in _align(rows)]
    lines.append("  " + "; ".join(_outcome(mode, entry[mode]) for mode in modes))
    lines += ["  " + line for line in _server_rows(entry, modes)]
    stream = entry[STREAM]
    if STREAM in modes and stream["itl_histogram"]:
        lines.append(f"  ITL histogram ({stream['itl_ms']['n']} gaps between token chunks):")
        lines += histogram_text(stream["itl_histogram"], unicode)
    said: dict[tuple[str, str], list[str]] = {}
    for mode in modes:
        for warning in entry[mode]["warnings"]:
            said.setdefault((warning["id"], warning["message"]), []).append(MODE_LABELS[mode])
    for (wid, message), where in said.items():
        lines.append(_paint(f"  warning ({', '.join(where)}, {wid}): {message}", colour))
    return lines


def side_by_side(document: dict[str, Any]) -> list[str]:
    """Every profile and mode on one line each: the client's medians, and vLLM's mean TTFT (exact)."""
    rows = [["PROFILE", "MODE", "TTFT ms", "ITL ms", "TPOT ms", "E2E ms", "tok/s", "decode tok/s", "vLLM TTFT mean"]]
    for name, entry in document["profiles"].items():
        for mode in document["settings"]["modes"]:
            data = entry[mode]
            server = data["server"]["ttft_ms"]["mean"] if data["server"] else None
            medians = [number(data[key]["median"]) for key in ("ttft_ms", "itl_ms", "tpot_ms", "e2e_ms", "tok_s")]
            rows.append([name, MODE_LABELS[mode], *medians, number(data["decode_tok_s"]["median"]), number(server)])
    return ["Side by side (medians):"] + ["  " + line for line in _align(rows, left=2)]


def text(document: dict[str, Any], colour: bool = False, unicode: bool = True) -> str:
    """The whole report."""
    s = document["settings"]
    modes = s["modes"]
    approx = "≈" if unicode else "~"
    lines = [
        f"agentcfg bench: {s['requests']} requests per mode, concurrency {s['concurrency']}, "
        f"max_tokens {s['max_tokens']}, prompt {approx}{s['prompt_tokens']} tokens"
    ]
    if document["interrupted"] == "ctrl-c":
        lines.append(_paint(f"Interrupted after {document['elapsed_s']:.1f} s: what finished before Ctrl-C", colour))
    elif document["interrupted"] == "deadline":
        lines.append(_paint(f"Stopped at the --deadline of {s['deadline_s']:g} s: what finished before it", colour))
    for name, entry in document["profiles"].items():
        lines.append("")
        lines += profile_text(name, entry, modes, colour, unicode)
    if len(document["profiles"]) > 1:
        lines.append("")
        lines += side_by_side(document)
    failing = [n for n, e in document["profiles"].items() if any(e[m]["failed"] for m in modes)]
    if failing:
        lines.append("")
        lines.append(f"Some requests failed: `agentcfg doctor {failing[0]}` names the cause.")
    return mask_text("\n".join(lines))


def csv_text(run: Run) -> str:
    """One row per request (failed ones too), for plotting; `itl_ms` holds that request's gaps,
    space-separated."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)

    def ms(value: float | None) -> str:
        return "" if value is None else f"{value * 1000:.3f}"

    def rate(value: float | None) -> str:
        return "" if value is None else f"{value:.2f}"

    for profile in run.profiles:
        for mode in MODES:
            phase = profile.phases.get(mode)
            if phase is None or not phase.records:
                continue
            start = min(r.sent for r in phase.records)
            for r in sorted(phase.records, key=lambda r: r.index):
                writer.writerow(
                    [
                        profile.name,
                        mode,
                        r.index,
                        int(r.ok),
                        r.error or "",
                        f"{r.sent - start:.6f}",
                        ms(r.ttft),
                        ms(r.e2e),
                        ms(r.tpot),
                        rate(r.decode_tok_s),
                        rate(r.tok_s),
                        r.output_tokens if r.ok else "",
                        int(r.usage_tokens is not None),
                        "" if r.prompt_tokens is None else r.prompt_tokens,
                        len(r.token_times),
                        r.finish_reason or "",
                        " ".join(f"{gap * 1000:.3f}" for gap in r.itl),
                    ]
                )
    return mask_text(out.getvalue())  # the CSV goes to a file, not through the masking stream


def progress_line(profile: str, mode: str, done: int, total: int, failed: int, unicode: bool = True) -> str:
    """`local stream [█████░░░░░]  5/10` for a terminal's status line."""
    width = 20
    filled = round(width * done / total) if total else width
    full, empty = ("█", "░") if unicode else ("#", "-")
    line = f"{profile} {MODE_LABELS[mode]} [{full * filled}{empty * (width - filled)}] {done}/{total}"
    return line + (f", {failed} failed" if failed else "")
