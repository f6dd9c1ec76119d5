"""Red team, another local user: /proc/*/cmdline of every user's processes is readable, and doctor reads the
vLLM ones. `str.isdigit()` is true for '²' (and other Unicode digits int() refuses): a process started as
`vllm serve --port ²` made every `agentcfg doctor` of a local profile fail with an internal error."""

from __future__ import annotations

import pytest

from agentcfg.doctor import localserver
from agentcfg.doctor.localserver import Process


@pytest.mark.parametrize("port", ["²", "①", "1²"])
def test_another_users_odd_port_never_crashes_doctor(port: str) -> None:
    hostile = Process(4242, 1, ("vllm", "serve", "m", "--port", port))
    assert localserver.port_of(hostile) == 8000  # not a port agentcfg can read: vLLM's default, as for none
    localserver.findings([hostile], 8000, "m")  # no exception
