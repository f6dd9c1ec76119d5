"""Issue 27 item 8: every numeric option is finite and bounded. `bench local -n 99999999999999999999999` built
every request up front (21.7 GB, killed by the kernel after 303 s); `doctor --timeout nan` said nothing listens;
`bench --timeout nan --json` printed NaN, which is not JSON. Each numeric option of every command is given NaN,
infinity or a 23-digit number through the real console script: one message that states the range, exit 2, and
under --json the error document (docs/cli.md)."""

from __future__ import annotations

import json
import re
import time

import click
import jsonschema
import pytest

from agentcfg.cli import base
from agentcfg.errors import Exit
from tests.cli.test_json_contract import LEAVES, schema_for
from tests.conftest import Home

NUMERIC = sorted(
    (path, param.opts[0])
    for path, command in LEAVES.items()
    for param in command.params
    if isinstance(param.type, (click.types.IntParamType, click.types.FloatParamType))
)
HUGE = "99999999999999999999999"  # the issue's -n


def _type(path: tuple[str, ...], option: str) -> click.ParamType:
    return next(p.type for p in LEAVES[path].params if p.opts[0] == option)


def _bad_values(path: tuple[str, ...], option: str) -> list[str]:
    return ["nan", "inf", "1e999"] if isinstance(_type(path, option), click.types.FloatParamType) else [HUGE]


CASES = [(path, option, value) for path, option in NUMERIC for value in _bad_values(path, option)]


def test_every_numeric_option_is_one_of_the_shared_bounded_types() -> None:
    assert len(NUMERIC) >= 12  # doctor, bench, route add and serve, profile add: the walk found them
    loose = [
        f"{' '.join(p)} {o}: {_type(p, o)!r}" for p, o in NUMERIC if not isinstance(_type(p, o), base.Int | base.Float)
    ]
    assert loose == [], "use agentcfg.cli.base.Int(least, most) or base.Float(least, most)"


@pytest.mark.parametrize(("path", "option", "value"), CASES, ids=[f"{' '.join(p)} {o} {v}" for p, o, v in CASES])
def test_a_number_out_of_range_is_one_message_and_exit_2(home: Home, path, option, value) -> None:
    home.run("profile", "set", "local", "base_url=http://127.0.0.1:9/v1")  # bench's default: were it to send
    # Only the option: click checks what the command line gives before what it lacks (a required argument).
    started = time.monotonic()
    result = home.run(*path, option, value, check=None)
    assert time.monotonic() - started < 20
    assert result.returncode == Exit.REFUSED, (result.returncode, result.stdout, result.stderr[-500:])
    assert "Traceback" not in result.stderr and result.stdout == ""
    message = result.stderr.strip().splitlines()[-1]
    assert option in message and re.search(r"is not in the range [\d,.]+ to [\d,.]+\.$", message), message


@pytest.mark.parametrize(("path", "option"), NUMERIC, ids=[f"{' '.join(p)} {o}" for p, o in NUMERIC])
def test_under_json_it_is_the_error_document(home: Home, path, option) -> None:
    value = _bad_values(path, option)[0]
    result = home.run(*path, "--json", option, value, check=Exit.REFUSED)
    document = json.loads(result.stdout)  # JSON: no NaN, no Infinity
    jsonschema.validate(document, schema_for(("error",)))
    assert document["exit"] == Exit.REFUSED and option in document["error"]
