"""Doctor's check of the MCP servers the agents will start: the command is there, the secrets resolve, and (not
--offline) the server answers `initialize` under doctor's one deadline.

Only what each agent's user-scope MCP files hold (Agent.mcp_files) is looked at: a project's files (`.mcp.json`,
a project opencode.json) are never read here, so doctor never starts a program a cloned repository names.

One definition used by several agents (McpServer.comparable, and the same plaintext values) is checked and
started once; its findings name the server (Finding.server) and, in the summary, every agent that has it.

A secret variable resolves as the agent's server gets it: from this environment (the agent inherits it), else
written in the agent's file (Found.plaintext), else doctor takes it from the keyring as `agentcfg exec` would give
it, and says that the agent started plainly from this shell would not have it. A keyring value goes only to a URL
whose origin it was stored for (KeyStore.origins). Every value is registered with agentcfg.redact: none is shown.

The wire (agentcfg/mcp/probe.py) runs one thread per server, started before doctor's HTTP probes and joined after
them: `start` and `Pending.findings` are the two halves.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import field
from typing import TYPE_CHECKING, Any

from agentcfg import env, fixes, redact
from agentcfg.doctor.model import FAIL, PASS, SKIP, WARN, Finding
from agentcfg.errors import AgentcfgError
from agentcfg.lazyclass import dataclass
from agentcfg.mcp.model import Found, McpServer, secret_name

if TYPE_CHECKING:
    from concurrent.futures import Future

    from agentcfg.mcp.probe import Answer


@dataclass
class Use:
    """One server definition (with the values its files write in plain text) and every agent file that has it."""

    server: McpServer  # comparable(): without the agents it is limited to
    found: list[Found]

    @property
    def agents(self) -> list[str]:
        return list(dict.fromkeys(f.agent for f in self.found))

    @property
    def plaintext(self) -> dict[str, str]:
        return dict(self.found[0].plaintext)

    def in_file(self, variable: str) -> str | None:
        """The value the agent's file writes in plain text for a secret variable: under the variable's name, or
        under the header it is sent in (a bearer token's Authorization without its `Bearer `)."""
        written = self.plaintext
        if variable in written:
            return written[variable]
        if self.server.bearer == variable and "Authorization" in written:
            return written["Authorization"].removeprefix("Bearer ")
        return next((written[h] for h, v in self.server.secret_headers if v == variable and h in written), None)

    def finding(
        self, ident: str, status: str, summary: str, evidence: str = "", fix: str = "", hint: str = ""
    ) -> Finding:
        """A finding about this server: its summary names the agents that start it, its evidence where each has
        it (then what was seen)."""
        shown = "; ".join(f"{f.agent}: {f.where}" for f in self.found) + (f"\n{evidence}" if evidence else "")
        return Finding(
            ident,
            status,
            None,
            f"{', '.join(self.agents)}: {summary}",
            redact.mask_text(shown),
            fix,
            redact.mask_text(hint),
            server=self.server.name,
        )


@dataclass
class Plan:
    """What to start or ask, with every value resolved (never shown), and what was already found offline."""

    use: Use
    argv: tuple[str, ...] = ()  # stdio
    program: str | None = None  # stdio: the file argv[0] is, found as the agent finds it (absolute)
    environ: dict[str, str] | None = None  # stdio: the server's whole environment
    headers: dict[str, str] | None = None  # remote
    explained: bool = False  # a secret is missing or withheld: a 401 is that, not another finding
    sources: dict[str, str] = field(default_factory=dict)  # variable -> where its value came from (env, file, keyring)


# -- what the agents' files define ----------------------------------------------------------------------------


def group(found: Sequence[Found]) -> list[Use]:
    """One Use per distinct definition, in the order first found."""
    uses: dict[tuple[McpServer, tuple[tuple[str, str], ...]], Use] = {}
    for item in found:
        key = (item.server.comparable(), tuple(sorted(item.plaintext)))
        if key in uses:
            uses[key].found.append(item)
        else:
            uses[key] = Use(key[0], [item])
    return list(uses.values())


# -- secrets ------------------------------------------------------------------------------------------------


class Secrets:
    """A secret variable's value as the agent's server would get it: this environment first, else the keyring
    (opened at the first variable the environment lacks; a keyring that cannot be opened is remembered, once)."""

    def __init__(self, environ: env.Environ, store: Any = None) -> None:
        self.environ = environ
        self._store = store
        self.problem: AgentcfgError | None = None

    def _keystore(self) -> Any:
        if self._store is None:
            from agentcfg.keystore import KeyStore  # lazy: only for a variable this environment lacks

            self._store = KeyStore(self.environ)
        return self._store

    def from_environment(self, variable: str) -> str | None:
        return self.environ.get(variable) or None

    def from_keyring(self, variable: str) -> str | None:
        if self.problem is not None:
            return None
        try:
            value: str | None = self._keystore().get(secret_name(variable))
        except AgentcfgError as problem:
            self.problem = problem
            return None
        redact.register(value)
        return value

    def origins(self, variable: str) -> list[str] | None:
        try:
            found: list[str] | None = self._keystore().origins(secret_name(variable))
        except AgentcfgError:
            return None
        return found


def _may_go(url: str, origins: list[str] | None) -> bool:
    from agentcfg.key_rules import origin  # lazy: a remote server's keyring secret only

    return bool(origins) and origin(url) in {origin(o) for o in origins or ()}


# -- offline ------------------------------------------------------------------------------------------------


def check(
    uses: Sequence[Use],
    environ: env.Environ,
    secrets: Secrets,
    profiles: Mapping[str, str | None],
    binaries: Mapping[str, str],
) -> tuple[list[Finding], list[Plan]]:
    """The findings from the files and this environment, and what to start or ask for each server whose command
    is there. `profiles`: each agent's profile (for `agentcfg exec`); `binaries`: each agent's program."""
    findings: list[Finding] = []
    plans: list[Plan] = []
    for use in uses:
        for item in use.found:
            for value in dict(item.plaintext).values():
                redact.register(value)
        own, plan = _offline(use, environ, secrets, profiles, binaries)
        findings += own
        if plan is not None:
            plans.append(plan)
    return findings, plans


def _offline(
    use: Use, environ: env.Environ, secrets: Secrets, profiles: Mapping[str, str | None], binaries: Mapping[str, str]
) -> tuple[list[Finding], Plan | None]:
    server, findings = use.server, []
    plan = Plan(use)
    if plaintext := use.plaintext:
        findings.append(
            use.finding(
                "mcp-secret-in-file",
                WARN,
                f"{server.name}'s {', '.join(sorted(plaintext))} "
                + ("is" if len(plaintext) == 1 else "are")
                + " written in plain text in the agent's file",
                fix=fixes.command("agentcfg", "mcp", "import"),
                hint="import moves it to the keyring and writes a reference to its variable in its place",
            )
        )
    unmodelled = sorted({name for f in use.found for name in f.unmodelled})
    if unmodelled:
        findings.append(
            use.finding(
                "mcp-unmodelled",
                SKIP,
                f"{server.name} has settings doctor does not check: {', '.join(unmodelled)}",
            )
        )
    values: dict[str, str] = {}
    for variable in server.variables():
        found, own = _resolve(use, variable, environ, secrets, profiles, binaries)
        findings += own
        plan.explained = plan.explained or any(f.status == FAIL for f in own)
        if found is not None:
            values[variable] = found
            plan.sources[variable] = (
                "file"
                if use.in_file(variable) is not None
                else "env"
                if secrets.from_environment(variable)
                else "keyring"
            )
    if server.remote:
        plan.headers = dict(server.headers)
        for header, variable in (
            *((("Authorization", server.bearer),) if server.bearer else ()),
            *server.secret_headers,
        ):
            value = values.get(variable)
            if value is None:
                continue
            prefix = "Bearer " if header == "Authorization" and server.bearer == variable else ""
            plan.headers[header] = value if value.startswith(prefix) else prefix + value
        return findings, plan
    program = server.command[0]
    where = program if "/" in program else env.which(program, environ)
    if where is None or not _executable(where):
        findings.append(
            use.finding(
                "mcp-command-missing",
                FAIL,
                f"{server.name}'s command {program} is not "
                + ("an executable file" if "/" in program else "on PATH: the agent cannot start it"),
                hint=f"install {program}, or give its absolute path (agentcfg mcp add {server.name} -- /path/to/it)",
            )
        )
        return findings, None
    plan.argv, plan.program = server.command, os.path.abspath(where)
    plan.environ = {**environ, **dict(server.env), **values}
    return findings, plan


def _executable(path: str) -> bool:
    return os.path.isfile(path) and os.access(path, os.X_OK)


def _resolve(
    use: Use,
    variable: str,
    environ: env.Environ,
    secrets: Secrets,
    profiles: Mapping[str, str | None],
    binaries: Mapping[str, str],
) -> tuple[str | None, list[Finding]]:
    """The value `variable` gives the server (None: none), and the findings about where it comes from."""
    name = use.server.name
    if (written := use.in_file(variable)) is not None:
        return written, []
    if (value := secrets.from_environment(variable)) is not None:
        redact.register(value)
        return value, []
    value = secrets.from_keyring(variable)
    if value is None:
        if secrets.problem is not None:
            return None, [
                use.finding(
                    "mcp-keyring-unavailable",
                    WARN,
                    f"{variable}, a secret of {name}, is not set here and the keyring cannot be read: "
                    f"{secrets.problem.message}",
                    hint=secrets.problem.hint or "",
                )
            ]
        return None, [
            use.finding(
                "mcp-secret-missing",
                FAIL,
                f"{name} needs the secret {variable}: it is neither set here nor in the keyring",
                fix=fixes.command("agentcfg", "mcp", "secret", variable),
                hint=f"or export {variable} in the shell that starts the agents",
            )
        ]
    if use.server.remote and not _may_go(use.server.url or "", secrets.origins(variable)):
        return None, [
            use.finding(
                "mcp-secret-wrong-host",
                FAIL,
                f"the keyring's {variable} was not stored for {use.server.url}: doctor did not send it",
                fix=fixes.command("agentcfg", "mcp", "secret", variable),
                hint="storing it again binds it to the servers that use it now",
            )
        ]
    with_profile = [(a, p) for a in use.agents if (p := profiles.get(a))]
    fix = (
        fixes.exec_agent(with_profile[0][1], binaries.get(with_profile[0][0], with_profile[0][0]))
        if with_profile
        else ""
    )
    return value, [
        use.finding(
            "mcp-secret-keyring-only",
            WARN,
            f"{variable}, a secret of {name}, is in the keyring but not set here: the agent started from this shell "
            "starts the server without it",
            fix=fix,
            hint=f"start the agent with `agentcfg exec`, which gives it {variable}, or export {variable}",
        )
    ]


# -- online -------------------------------------------------------------------------------------------------


def ask(plan: Plan, ends: float) -> Answer:
    """One server's answer (blocking, by `ends` on time.monotonic())."""
    from agentcfg.mcp import probe  # lazy: the wire, for a run that starts servers

    server = plan.use.server
    if server.remote:
        return probe.remote(server.url or "", server.transport, plan.headers or {}, ends)
    return probe.stdio(plan.argv, plan.environ or {}, ends, plan.program)


class Pending:
    """The servers being asked, one thread each; `findings` waits for them (each keeps to the deadline)."""

    def __init__(self, plans: Sequence[Plan], deadline: float, asker: Callable[[Plan, float], Answer] = ask) -> None:
        import time
        from concurrent.futures import ThreadPoolExecutor

        self.plans = list(plans)
        self.deadline = deadline
        # Answer is made (agentcfg.lazyclass) at its first instance: here, before the threads, which could meet
        # the class between its stub __init__ going and the one made arriving (a TypeError seen once in CI).
        from agentcfg.mcp import probe  # lazy: the wire, for a run that asks servers

        probe.Answer("timeout")
        ends = time.monotonic() + deadline
        self._pool = ThreadPoolExecutor(max_workers=max(1, len(self.plans)), thread_name_prefix="agentcfg-mcp")
        self._futures: list[Future[Answer]] = [self._pool.submit(asker, p, ends) for p in self.plans]

    def findings(self) -> list[Finding]:
        answers = [f.result() for f in self._futures]
        self._pool.shutdown(wait=True)
        return [judge(p, a, self.deadline) for p, a in zip(self.plans, answers, strict=True)]


def start(plans: Sequence[Plan], deadline: float) -> Pending | None:
    """Start asking every planned server now (None: nothing to ask, nothing started or imported)."""
    return Pending(plans, deadline) if plans else None


def judge(plan: Plan, answer: Answer, deadline: float) -> Finding:
    """The finding for one server's answer to `initialize`."""
    use, server = plan.use, plan.use.server
    name, took = server.name, f"{answer.elapsed:.2f} s"
    stderr = f"\nits stderr ends:\n{answer.stderr}" if answer.stderr else ""
    if answer.kind == "ok":
        if server.transport == "sse":  # legacy SSE: the stream's endpoint event is the answer (probe.py)
            return use.finding("mcp-ok", PASS, f"{name} opens its event stream ({answer.detail}, {took})")
        who = " ".join(filter(None, (answer.server_name, answer.server_version))) or "no serverInfo"
        return use.finding("mcp-ok", PASS, f"{name} answers initialize ({who}, {took})")
    if answer.kind == "missing":
        return use.finding("mcp-command-missing", FAIL, f"{name}'s command {server.command[0]} cannot be found",
                           answer.detail)  # fmt: skip
    if answer.kind == "exited":
        hint = "run its command in a shell to see why; a missing secret or argument is the usual cause"
        return use.finding(
            "mcp-exited", FAIL, f"{name} ended before it answered initialize", answer.detail + stderr, hint=hint
        )
    if answer.kind == "timeout":
        return use.finding(
            "mcp-no-answer",
            FAIL,
            f"{name} did not answer initialize within the {deadline:g} s deadline",
            answer.detail + stderr,
            hint="a first `npx`/`uvx` run downloads the package: run doctor again with a longer --timeout",
        )
    if answer.kind == "unreachable":
        return use.finding("mcp-unreachable", FAIL, f"{name} cannot be reached at {server.url}", answer.detail,
                           hint="check the URL, and that the server is up")  # fmt: skip
    if answer.kind == "status" and answer.status in (401, 403):
        return _unauthorized(plan, answer)
    if answer.kind == "status" and answer.status in (404, 405):
        other = "sse" if server.transport == "http" else "http"
        return use.finding(
            "mcp-wrong-url",
            FAIL,
            f"{name} answers {answer.status} at {server.url}: the wrong URL, or not the {server.transport} transport",
            f"HTTP {answer.status}: {answer.detail}",
            hint=f"check the path the server's documentation gives; if it speaks {other}, add it with that transport",
        )
    what = f"HTTP {answer.status}: " if answer.status else ""
    return use.finding("mcp-bad-answer", FAIL, f"{name} does not answer initialize as an MCP server does",
                       what + answer.detail + stderr)  # fmt: skip


def _unauthorized(plan: Plan, answer: Answer) -> Finding:
    """A 401/403: the token the server was sent, said by where it came from (the fix differs)."""
    use, server = plan.use, plan.use.server
    evidence = f"HTTP {answer.status}: {answer.detail}"
    if plan.explained:  # the secret was not sent: its own finding is the cause
        return use.finding("mcp-unauthorized", SKIP, f"{server.name} answers {answer.status}: its secret was not sent",
                           evidence)  # fmt: skip
    variables = server.variables()
    if not variables:
        return use.finding(
            "mcp-unauthorized",
            FAIL,
            f"{server.name} wants a token (HTTP {answer.status}) and is given none",
            evidence,
            hint=f"add it again with its token: agentcfg mcp add {server.name} --url URL --secret VARIABLE",
        )
    sent = [v for v in variables if v in plan.sources]
    where = {"env": "set in this shell", "file": "written in the agent's file", "keyring": "from the keyring"}
    said = ", ".join(f"{v} ({where[plan.sources[v]]})" for v in sent) or "none"
    keyring = all(plan.sources[v] == "keyring" for v in sent)
    return use.finding(
        "mcp-unauthorized",
        FAIL,
        f"{server.name} refuses the token it was sent (HTTP {answer.status}): {said}",
        evidence,
        fixes.command("agentcfg", "mcp", "secret", sent[0] if sent else variables[0]) if keyring else "",
        "store the token the server expects"
        if keyring
        else "the value this shell or the file gives is the one the agent sends: change it there to the token the "
        "server expects",
    )


def run(
    found: Sequence[Found],
    environ: env.Environ,
    *,
    deadline: float,
    offline: bool,
    profiles: Mapping[str, str | None] | None = None,
    binaries: Mapping[str, str] | None = None,
    secrets: Secrets | None = None,
) -> list[Finding]:
    """Every finding about these servers, at once (a test's entry, and doctor's without other probes)."""
    findings, plans = check(group(found), environ, secrets or Secrets(environ), profiles or {}, binaries or {})
    pending = None if offline else start(plans, deadline)
    return findings + (pending.findings() if pending else [])
