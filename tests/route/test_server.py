"""route.server: a Ctrl-C while LiteLLM starts is never lost (the CLI's end-to-end case is tests/cli/test_route.py)."""

from __future__ import annotations

import os
import signal

import pytest

from agentcfg.route import server


class _CtrlCInFinalizer:
    def __del__(self) -> None:
        # Python runs the handler here: a KeyboardInterrupt raised by Python's own handler would be printed
        # and dropped (sys.unraisablehook)
        os.kill(os.getpid(), signal.SIGINT)


def test_a_ctrl_c_landing_in_a_finalizer_is_raised_where_checked() -> None:
    with pytest.raises(KeyboardInterrupt), server.ctrl_c_as_flag() as interrupted:
        _CtrlCInFinalizer()
        interrupted()


def test_the_handler_before_is_back_after() -> None:
    before = signal.getsignal(signal.SIGINT)
    with server.ctrl_c_as_flag() as interrupted:
        interrupted()  # nothing pressed: nothing raised
    assert signal.getsignal(signal.SIGINT) is before
