"""What `bench` is asked to measure, resolved and checked before a request is sent: the profiles (with --legs a
route's legs beside it), each one's target and what to note about it, the settings, and the --csv file writable.
"""

from __future__ import annotations

from agentcfg import env, profiles
from agentcfg.bench import runner
from agentcfg.bench.measure import MODES
from agentcfg.bench.summary import Settings
from agentcfg.errors import AgentcfgError
from agentcfg.profiles import Profile
from agentcfg.route import control

# Prompt tokens in flight at once (--concurrency x --prompt-tokens): each request holds its prompt as text and as
# JSON, ~10 bytes a token, so at most ~350 MB.
IN_FLIGHT_MOST = 2**25


def prepare(
    names: tuple[str, ...],
    environ: env.Environ,
    *,
    legs: bool,
    csv_file: str | None,
    requests: int,
    concurrency: int,
    max_tokens: int,
    prompt_tokens: int,
    mode: str,
    timeout: float,
    deadline: float,
) -> tuple[list[runner.Target], Settings, list[str]]:
    """The targets, the settings and the notes of a run; a bad input refused before anything is sent (the size
    of what is in flight before any profile or key is read)."""
    check_in_flight(min(concurrency, requests), prompt_tokens)
    targets, notes = choose(names, environ, legs=legs)
    if concurrency > requests:
        notes.append(f"--concurrency {concurrency} is more than --requests {requests}: {requests} run at once")
    if csv_file:
        check_csv(csv_file)
    settings = Settings(
        requests=requests,
        concurrency=min(concurrency, requests),
        max_tokens=max_tokens,
        prompt_tokens=prompt_tokens,
        modes=MODES if mode == "both" else (mode,),
        timeout=timeout,
        deadline=deadline,
    )
    return targets, settings, notes


def check_in_flight(concurrency: int, prompt_tokens: int) -> None:
    if concurrency * prompt_tokens > IN_FLIGHT_MOST:
        raise AgentcfgError(
            f"--concurrency {concurrency:,} with --prompt-tokens {prompt_tokens:,} holds "
            f"{concurrency * prompt_tokens:,} prompt tokens in memory at once; at most {IN_FLIGHT_MOST:,}",
            hint=f"Run fewer at once (`agentcfg bench ... -c {max(1, IN_FLIGHT_MOST // prompt_tokens)}`) or send "
            "shorter prompts.",
        )


def choose(names: tuple[str, ...], environ: env.Environ, *, legs: bool) -> tuple[list[runner.Target], list[str]]:
    """The targets of the profiles named (none: the last switch's), each once, and the notes that go with them."""
    chosen = [profiles.get(n, environ) for n in dict.fromkeys(names or [runner.default_profile(environ)])]
    notes = [] if names else [f"benchmarking {chosen[0].name} (name profiles to choose: agentcfg bench PROFILE...)"]
    chosen, legs_notes = with_legs(chosen, legs, environ)
    notes += legs_notes
    targets = []
    for found in chosen:
        target, note = runner.target(found, environ)
        targets.append(target)
        notes += [note] if note else []
    return targets, notes


def with_legs(chosen: list[Profile], legs: bool, environ: env.Environ) -> tuple[list[Profile], list[str]]:
    """With --legs, each route followed by its legs (each profile once); the notes that go with it."""
    routes = [p for p in chosen if p.route is not None]
    if not legs:
        return chosen, [
            f"{p.name} is a route: `agentcfg bench {p.name} --legs` puts its legs beside it" for p in routes
        ]
    if not routes:
        return chosen, ["--legs: none of these profiles is a route (`agentcfg route add` makes one)"]
    expanded: dict[str, Profile] = {}
    for found in chosen:
        expanded.setdefault(found.name, found)
        if found.route is not None:
            for leg in control.route_and_legs(found.name, environ)[1]:
                expanded.setdefault(leg.name, leg)
    return list(expanded.values()), []


def check_csv(csv_file: str) -> None:
    """--csv FILE can be written: said now, not after minutes of measuring."""
    try:
        open(csv_file, "a", encoding="utf-8").close()
    except OSError as exc:
        raise AgentcfgError(
            f"cannot write --csv {csv_file}: {exc.strerror}",
            hint="Give a file in a directory you can write: agentcfg bench ... --csv ./bench.csv",
        ) from None
