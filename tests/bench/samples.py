"""Records of requests as a scheduled server would produce them, for the pure tests of bench."""

from __future__ import annotations

from agentcfg.bench.measure import NON_STREAM, STREAM, Record


def streamed(index: int = 0, *, ttft=0.05, itl=0.01, tokens=16, per_chunk=1, usage=True, error=None) -> Record:
    chunks = -(-tokens // per_chunk)
    times = [ttft + i * per_chunk * itl for i in range(chunks)]
    return Record(
        STREAM,
        index,
        sent=0.0,
        token_times=times,
        ended=times[-1] + 0.001,
        usage_tokens=tokens if usage else None,
        prompt_tokens=500,
        error=error,
    )


def answered(index: int = 0, *, e2e=0.2, tokens=16, usage=True) -> Record:
    return Record(NON_STREAM, index, sent=0.0, ended=e2e, usage_tokens=tokens if usage else None, text_chars=4 * 16)
