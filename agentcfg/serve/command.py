"""The `vllm serve` command and its environment, built from a profile and what the user says about the weights.

Pure: `build` decides, `render` and `shown` describe; only `resolve_vllm` looks at the disk (the CLI calls it
first and passes its answer as `Options.vllm`). What the command always does, and why:

- `--served-model-name` is the profile's model, the name every agent sends (another name: 404s);
  `--max-model-len` its window (another window: agents compact too late, or waste it).
- The family's parsers (families.py) and always `--enable-auto-tool-choice` (without it agentic requests
  get a 400, or tool calls come back as text).
- `--host 127.0.0.1` and the profile's port; `--tensor-parallel-size` over the GPUs it may use.
- Never `--enforce-eager` unless asked (it decodes 6-13x slower); never the key on the command line,
  where /proc shows it to every user: vLLM reads it from VLLM_API_KEY.
- The environment is the user's, less what broke the field reports' servers or vLLM never needs: no
  PYTHONPATH or PYTHONHOME (another install's packages shadowing the venv's), PYTHONNOUSERSITE=1 (nor
  ~/.local's), no other provider's key (*_API_KEY, *_AUTH_TOKEN; HF_TOKEN stays, downloads of gated
  weights need it), an inherited VLLM_API_KEY replaced or removed, VLLM_NO_USAGE_STATS=1 unless the user
  set it (vLLM otherwise reports usage to its project), CUDA_VISIBLE_DEVICES when GPUs are given.

Flags after `--` (`extra`) go last and replace agentcfg's own flag of the same name (`--tool_call_parser`,
`--tool-call-parser=x` and `-tp` count as their long names); a parallel layout there (`-tp`, `-dp`, `-pp`)
replaces agentcfg's tensor parallelism.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Mapping
from typing import Any

from agentcfg.errors import AgentcfgError, Exit
from agentcfg.lazyclass import dataclass
from agentcfg.profiles import Profile, is_loopback
from agentcfg.redact import MASK
from agentcfg.serve import families
from agentcfg.serve.families import EXAMPLES_URL, Family

DEFAULT_PORT = 8000  # vLLM's own default, and the built-in `local` profile's
KEY_VARIABLE = "VLLM_API_KEY"
# Measured: DeepSeek-V4-Flash on 2x H100 decoded 67 tok/s with CUDA graphs and 5 with --enforce-eager.
EAGER_COST = (
    "--enforce-eager turns off CUDA graphs: decoding is far slower (measured 67 -> 5 tok/s, 13x, for "
    "DeepSeek-V4-Flash on 2x H100; 6-10x in other reports). Use it only to get past a CUDA-graph failure."
)
# Short forms vLLM's parser accepts for the flags agentcfg compares (`vllm serve --help`).
ALIASES = {"-tp": "--tensor-parallel-size", "-dp": "--data-parallel-size", "-pp": "--pipeline-parallel-size"}
PARALLEL = {"--tensor-parallel-size", "--data-parallel-size", "--pipeline-parallel-size"}
_OTHER_KEYS = re.compile(r"_(?:API_KEY|AUTH_TOKEN)$")
_PYTHON = re.compile(r"python(?:\d+(?:\.\d+)?)?$")


@dataclass(frozen=True)
class Options:
    """What `agentcfg serve` was asked for, before the profile and family fill the rest."""

    weights: str | None = (
        None  # a path or a model id (None: the profile's model if a hub id, else a checkpoint of its family)
    )
    vllm: str | None = None  # the `vllm` program as resolve_vllm found it; None: `vllm` (on PATH)
    host: str = "127.0.0.1"
    port: int | None = None  # None: the port of the profile's base_url
    family: str | None = None  # a row's name; "none": no family flags (then extra must give --tool-call-parser)
    gpus: tuple[str, ...] | None = None  # CUDA device indices it may use
    enforce_eager: bool = False
    extra: tuple[str, ...] = ()  # flags after `--`; each overrides agentcfg's own flag of that name


@dataclass(frozen=True)
class Command:
    """The vLLM command line and environment `agentcfg serve` runs."""

    argv: tuple[str, ...]  # [vllm program, "serve", weights, ...]; never the key
    env: dict[str, str]  # the server's whole environment (the key, if any, in VLLM_API_KEY)
    family: Family | None
    host: str
    port: int
    warnings: tuple[str, ...]


def flag_name(token: str) -> str | None:
    """The long name a command-line token sets (`--tool_call_parser=x` -> `--tool-call-parser`), `--no-X` as
    `--X`; None for a value."""
    if not token.startswith("-") or re.fullmatch(r"-[\d.]+", token):
        return None
    name = token.split("=", 1)[0]
    name = ALIASES.get(name, name)
    if name.startswith("--"):
        name = "--" + name[2:].replace("_", "-")
        name = name.removeprefix("--no-")
        name = name if name.startswith("--") else "--" + name
    return name


def flag_value(argv: tuple[str, ...] | list[str], name: str) -> str | None:
    """The last value `argv` gives flag `name` (`--port 9000` or `--port=9000`)."""
    value = None
    for index, token in enumerate(argv):
        if flag_name(token) != name:
            continue
        if "=" in token:
            value = token.split("=", 1)[1]
        elif index + 1 < len(argv):
            value = argv[index + 1]
    return value


def build(
    profile: Profile, options: Options, environ: Mapping[str, str], *, gpu_count: int, key: str | None
) -> Command:
    """The command that serves `profile` on this machine; AgentcfgError where it cannot be one that works."""
    check_profile(profile)
    extra = tuple(options.extra)
    given = {name for name in map(flag_name, extra) if name}
    if "--api-key" in given:
        raise AgentcfgError(
            "--api-key on the command line is refused: every user on this machine can read it in /proc",
            hint=f"agentcfg gives vLLM the profile's key through {KEY_VARIABLE}: store it with "
            f"`agentcfg key set {profile.name}`, and leave --api-key out.",
        )
    if profile.needs_key and not key:
        raise AgentcfgError(
            f"profile {profile.name} needs a key and none is stored or exported",
            hint=f"Store it with `agentcfg key set {profile.name}` (the server then requires it).",
            exit_code=Exit.NO_KEY,
        )
    family = _family(profile, options, given)
    weights = _weights(profile, options, family)
    profile_port = url_port(profile) or 80  # a loaded profile's base_url is valid: None does not come
    port = options.port if options.port is not None else profile_port
    count = len(options.gpus) if options.gpus is not None else gpu_count

    ours: list[list[str]] = [["--served-model-name", profile.model]]
    if profile.context_window:
        ours.append(["--max-model-len", str(profile.context_window)])
    if family:
        flags = family.flags()
        ours += [flags[i : i + 2] for i in range(0, len(flags), 2)]
    ours.append(["--enable-auto-tool-choice"])
    if options.enforce_eager:
        ours.append(["--enforce-eager"])
    ours += [["--host", options.host], ["--port", str(port)]]
    if count > 1 and not given & PARALLEL:
        ours.append(["--tensor-parallel-size", str(count)])
    kept = [part for group in ours if group[0] not in given for part in group]
    argv = (options.vllm or "vllm", "serve", weights, *kept, *extra)

    host = flag_value(extra, "--host") or options.host
    port_text = flag_value(extra, "--port")
    final_port = int(port_text) if port_text and port_text.isdigit() else port
    warnings = _warnings(profile, family, argv, extra, host, final_port, profile_port)
    return Command(
        argv=argv,
        env=_environment(profile, options, environ, key),
        family=family,
        host=host,
        port=final_port,
        warnings=tuple(warnings),
    )


def check_profile(profile: Profile) -> None:
    if profile.route is not None:
        raise AgentcfgError(
            f"profile {profile.name} is a route: its router sends requests to other profiles' servers",
            hint="Serve one of its legs' local profiles instead (`agentcfg serve LEG`).",
        )
    if not profile.is_local:
        raise AgentcfgError(
            f"profile {profile.name}'s base_url {profile.base_url} is not this machine's server",
            hint="`agentcfg serve` starts vLLM for a profile whose base_url is on localhost or 127.0.0.1 "
            "(like the built-in `local`).",
        )


def _family(profile: Profile, options: Options, given: set[str]) -> Family | None:
    if options.family == "none":
        family = None
    elif options.family is not None:
        family = families.get(options.family)
        if family is None:
            raise AgentcfgError(
                f"unknown family {options.family!r}",
                hint=f"Families: {', '.join(families.known_names())}, or none (then give `-- --tool-call-parser X`).",
            )
    else:
        family = families.detect(options.weights, profile.model)
    if family is None and "--tool-call-parser" not in given:
        named = "no family given" if options.family == "none" else f"no model family known for {profile.model}"
        raise AgentcfgError(
            f"{named}, and no --tool-call-parser: agents' tool calls would fail with a 400",
            hint=f"Name the family with `--family NAME` ({', '.join(families.known_names())}), "
            "or give vLLM's parser yourself: `-- --tool-call-parser X`.",
        )
    return family


def _weights(profile: Profile, options: Options, family: Family | None) -> str:
    if options.weights:
        return options.weights
    if "/" in profile.model:  # a hub id (org/name): the name agents use is the checkpoint's
        return profile.model
    checkpoint = family.checkpoint_for(profile.model) if family else None
    if checkpoint:
        return checkpoint
    known = f" (e.g. {', '.join(family.checkpoints)})" if family and family.checkpoints else ""
    raise AgentcfgError(
        f"which weights to serve as {profile.model} is not known",
        hint=f"Give them with `--weights PATH_OR_MODEL_ID`{known}.",
    )


def url_port(profile: Profile) -> int | None:
    """The port of the profile's base_url (its scheme's when none is given); None: not a valid one."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(profile.base_url)
        return parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        return None


def _environment(profile: Profile, options: Options, environ: Mapping[str, str], key: str | None) -> dict[str, str]:
    env = {
        name: value
        for name, value in environ.items()
        if name not in ("PYTHONPATH", "PYTHONHOME", KEY_VARIABLE, profile.key_env) and not _OTHER_KEYS.search(name)
    }
    env["PYTHONNOUSERSITE"] = "1"
    env.setdefault("VLLM_NO_USAGE_STATS", "1")
    if options.gpus is not None:
        env["CUDA_VISIBLE_DEVICES"] = ",".join(options.gpus)
    if key:
        env[KEY_VARIABLE] = key
    return env


def _warnings(
    profile: Profile,
    family: Family | None,
    argv: tuple[str, ...],
    extra: tuple[str, ...],
    host: str,
    port: int,
    url_port: int,
) -> list[str]:
    out = []
    names = {flag_name(token) for token in argv[3:]}
    negated = {flag_name(token) for token in extra if token.startswith("--no-")}
    if "--enforce-eager" in names and "--enforce-eager" not in negated:
        out.append(EAGER_COST)
    if "--enable-auto-tool-choice" in negated:
        out.append("--no-enable-auto-tool-choice: agents' requests with tools will fail with a 400")
    served = flag_value(extra, "--served-model-name")
    if served and served != profile.model:
        out.append(f"the server answers as {served}, but agents on {profile.name} ask for {profile.model}: 404s")
    if not is_loopback(host):
        out.append(
            f"--host {host} makes the server reachable from other machines"
            + ("" if profile.needs_key else ", with no key")
        )
    if port != url_port:
        out.append(f"the server listens on port {port}, but {profile.name}'s base_url says {url_port}")
    if port < 1024:
        out.append(f"port {port} needs root: give {profile.name}'s base_url a port such as :{DEFAULT_PORT}")
    window_text = flag_value(extra, "--max-model-len")
    window = int(window_text) if window_text and window_text.isdigit() else profile.context_window
    if family and window:
        if family.min_window and window < family.min_window and family.min_window_note:
            out.append(f"{family.min_window_note}; this window is {window:,}")
        if family.max_window and window > family.max_window:
            out.append(
                f"the window {window:,} is larger than {family.name}'s native {family.max_window:,}: vLLM refuses to "
                "start unless VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 is set, and the model was not trained past it"
            )
    if family and family.chat_template and "--chat-template" not in names:
        name = family.chat_template
        out.append(
            f"{family.name}'s tool calls want vLLM's chat template {name}, which the vLLM wheel does not ship: "
            f"download it ({EXAMPLES_URL}{name}) and add `-- --chat-template PATH`"
        )
    if family and family.trust_remote_code and "--trust-remote-code" not in names:
        out.append(
            f"{family.name} checkpoints need their own Python code: add `-- --trust-remote-code` "
            "if you trust the weights' publisher"
        )
    return out


def resolve_vllm(given: str | None, environ: Mapping[str, str]) -> str:
    """The `vllm` program to run: `given` (the program, a python that has vLLM, or a venv's directory) or
    `vllm` on PATH; the path as found (a venv's python is a symlink: its venv is where it stands)."""
    import shutil

    hint = (
        "Install vLLM (e.g. in a venv: `python -m venv ~/vllm && ~/vllm/bin/pip install vllm`) and pass "
        "`--vllm PATH` (the program, its python, or the venv)."
    )
    if given is None:
        found = shutil.which("vllm", path=environ.get("PATH", ""))
        if not found:
            raise AgentcfgError("no `vllm` program on PATH", hint=hint)
        return os.path.abspath(found)
    path = os.path.abspath(os.path.expanduser(given))
    if os.path.isdir(path):
        program = os.path.join(path, "bin", "vllm")
    elif _PYTHON.match(os.path.basename(path)):
        program = os.path.join(os.path.dirname(path), "vllm")
    else:
        program = path
    if not (os.path.isfile(program) and os.access(program, os.X_OK)):
        raise AgentcfgError(f"{program} is not a program that can be run", where=given, hint=hint)
    return program


def _env_changes(command: Command, environ: Mapping[str, str]) -> tuple[dict[str, str], list[str]]:
    changed = {
        name: (MASK if name == KEY_VARIABLE else value)
        for name, value in sorted(command.env.items())
        if environ.get(name) != value or name == KEY_VARIABLE
    }
    removed = sorted(name for name in environ if name not in command.env)
    return changed, removed


def render(command: Command, environ: Mapping[str, str]) -> str:
    """For `--print`: `env -u ... NAME=value ... vllm serve ...`, shell-quoted, one flag a line, the key masked."""
    changed, removed = _env_changes(command, environ)
    head = ["env", *(f"-u {shlex.quote(name)}" for name in removed)]
    head += [f"{name}={value if name == KEY_VARIABLE else shlex.quote(value)}" for name, value in changed.items()]
    lines = [" ".join(head), " ".join(shlex.quote(part) for part in command.argv[:3])]
    rest = list(command.argv[3:])
    while rest:
        token = rest.pop(0)
        line = [token]
        if flag_name(token) and "=" not in token and rest and not flag_name(rest[0]):
            line.append(rest.pop(0))
        lines.append(" ".join(shlex.quote(part) for part in line))
    return " \\\n  ".join(lines)


def shown(command: Command, environ: Mapping[str, str]) -> dict[str, Any]:
    """For `--json`: the argv, the environment's changes (the key masked), the family and the warnings."""
    changed, removed = _env_changes(command, environ)
    return {
        "argv": list(command.argv),
        "env": {"set": changed, "unset": removed},
        "family": command.family.name if command.family else None,
        "host": command.host,
        "port": command.port,
        "warnings": list(command.warnings),
    }
