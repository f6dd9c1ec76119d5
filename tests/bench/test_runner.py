"""The order of a phase's requests (agentcfg/bench/runner.py): made as they are sent, never all up front."""

from __future__ import annotations

import asyncio

import pytest

from agentcfg.bench import runner
from agentcfg.bench.measure import STREAM, Record
from agentcfg.bench.summary import Phase, Settings

TARGET = runner.Target("t", "http://127.0.0.1:9/v1", "m")


def test_a_phase_makes_each_request_when_a_slot_is_free(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 27 item 8: a phase made all of its requests at once (one task each, then gather): `bench -n
    99999999999999999999999` grew to 21.7 GB before the kernel killed it. Now `concurrency` workers take the
    next index when they are free: tasks in existence stay at the concurrency, whatever -n is."""
    peak, order = 0, []

    async def request(client, target, mode, index, settings, ignore_eos, max_tokens) -> Record:
        nonlocal peak
        peak = max(peak, len(asyncio.all_tasks()))
        order.append(index)
        await asyncio.sleep(0)
        return Record(mode, index, sent=0.0)

    monkeypatch.setattr(runner, "request", request)
    phase = Phase(STREAM, planned=20_000)
    asyncio.run(runner._phase(None, TARGET, phase, Settings(requests=20_000, concurrency=4), False, None))
    assert sorted(r.index for r in phase.records) == list(range(20_000))
    assert order[:4] == [0, 1, 2, 3]  # sent in order, four at a time
    assert peak <= 4 + 1, peak  # the workers and the task that runs the phase
