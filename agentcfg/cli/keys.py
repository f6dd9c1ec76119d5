"""`key ...`, `exec`, `env`: a profile's key, stored, and handed to an agent."""

from __future__ import annotations

import os
import sys
from typing import Any

import click

from agentcfg import fixes
from agentcfg.cli import base, hotpath
from agentcfg.cli.hotpath import print_secret
from agentcfg.errors import AgentcfgError, Exit

# -- keys --------------------------------------------------------------------------------------------


# Read from stdin: enough to see a key of keystore.MAX_LENGTH and the line breaks after it, bounded so that
# `yes | agentcfg key set P` or a file piped by mistake is refused instead of read to its end.
_STDIN_LIMIT = 1_048_576


def _stdin_line(profile: str, refusal: str) -> str:
    """The one line of stdin (its LF or CRLF ending dropped); more lines are refused, never cut to the first."""
    import re

    from agentcfg import keystore

    text = sys.stdin.read(_STDIN_LIMIT)
    how = f'printf %s "$KEY" | {fixes.key_set(profile)}'  # "$KEY": the user's own variable, expanded by the shell
    hint = f"Give the key alone on one line: `{how}`, or type it: `{fixes.key_set(profile)}` on a terminal."
    if len(text) >= _STDIN_LIMIT:
        raise AgentcfgError(
            f"{refusal}: stdin held more than {_STDIN_LIMIT:,} characters; a key is one line of at most "
            f"{keystore.MAX_LENGTH:,}",
            hint=hint,
        )
    line = text.removesuffix("\n").removesuffix("\r")
    if "\n" in line or "\r" in line:
        lines = len(re.split(r"\r\n|\r|\n", line))
        raise AgentcfgError(f"{refusal}: stdin held {lines} lines; a key is one line", hint=hint)
    return line


def read_key(profile: str, *, refusal: str | None = None) -> str:
    """PROFILE's key: typed at a hidden prompt on a terminal, else the one line of stdin; refused (AgentcfgError,
    nothing stored) unless it can be a key (keystore.check_value, typed). `refusal` starts the message."""
    from agentcfg import keystore

    refusal = refusal or f"not using the key for {profile}"
    if sys.stdin.isatty():
        value = click.prompt(f"Key for {profile} (input hidden)", hide_input=True, prompt_suffix=": ", err=True)
    else:
        value = _stdin_line(profile, refusal)
    if reason := keystore.check_value(value, typed=True):
        raise AgentcfgError(
            f"{refusal}: {reason}",
            hint=f"Give the key alone: `{fixes.key_set(profile)}` asks for it (input hidden).",
        )
    return value


@click.group()
def key() -> None:
    """Keep profile keys in the OS keyring (Keychain, Credential Locker, Secret Service).

    \b
    printf %s "$KEY" | agentcfg key set taotoken    store (or type it at the hidden prompt)
    agentcfg key list                                which profiles have a key, masked
    agentcfg exec taotoken -- opencode               run an agent with the key in its variable
    """


def _key_profile(name: str, environ: dict[str, str]) -> Any:
    from agentcfg import keystore, profiles

    found = profiles.get(name, environ)
    if not found.key_env:
        raise keystore.not_keyed(found)
    return found


@key.command("set")
@click.argument("name", metavar="PROFILE", shell_complete=base.complete_keyed_profile)
@base.json_option("Print the result as JSON (never the key).")
def key_set(name: str, as_json: bool) -> None:
    """Store PROFILE's key: typed at a hidden prompt, or one line read from stdin.

    Storing again replaces the key (that is all a rotation takes: no agent file holds it). The key is
    bound to the profile's hosts (base_url, anthropic_base_url): it is handed out for no other host.
    """
    from agentcfg import keystore, redact, report

    environ = base.environ()
    found = _key_profile(name, environ)
    store = keystore.KeyStore(environ, found)
    label = store.label  # a missing backend fails here, before the key is typed
    value = read_key(name, refusal=f"not storing the key for {name}")
    store.store(found, value)  # bound to the profile's hosts now: `key bind` after moving it
    if as_json:
        click.echo(report.dumps({"profile": name, "backend": label, "stored": True, "tail": redact.tail(value)}))
        return
    click.echo(f"Stored the key for {name} in the {label} ({redact.tail(value)}).")
    exported = environ.get(found.key_env)
    if exported and exported != value:
        base.emit_notes([f"{found.key_env} in this shell holds another key; `agentcfg exec` uses the keyring's"])


@key.command("get")
@click.argument("name", metavar="PROFILE", shell_complete=base.complete_keyed_profile)
@base.json_option("Print where the key comes from as JSON: its variable, source and masked tail, never the key.")
def key_get(name: str, as_json: bool) -> None:
    """Print PROFILE's key and nothing else (for helper commands such as Claude Code's apiKeyHelper).

    The keyring's entry wins; without one, a value already exported in the profile's variable. No key at all:
    exit status 4 and nothing printed.
    """
    hotpath.key_get(name, as_json)


@key.command("bind")
@click.argument("name", metavar="PROFILE", shell_complete=base.complete_keyed_profile)
@base.json_option("Print the result as JSON (never the key).")
def key_bind(name: str, as_json: bool) -> None:
    """Let PROFILE's stored key go to the profile's current hosts (after you changed its base URL).

    A key is handed out only for the hosts it was stored for; this replaces them with the profile's own now.
    """
    from agentcfg import keystore, report

    environ = base.environ()
    found = _key_profile(name, environ)
    store = keystore.KeyStore(environ, found)
    if store.get(name) is None:
        raise keystore.missing(found, store.label)
    old, new = store.origins(name), keystore.profile_origins(found)
    changed = old != new
    if changed:
        store.bind(name, new)
    if as_json:
        click.echo(report.dumps({"profile": name, "backend": store.label, "old": old, "new": new, "changed": changed}))
    elif changed:
        before = ", ".join(old) if old else "(no hosts recorded)" if old is None else "(no host)"
        click.echo(f"Bound the key for {name}: {before} -> {', '.join(new)}")
    else:
        click.echo(f"The key for {name} is bound to {', '.join(new)} already; nothing changed.")


@key.command("rm")
@click.argument("name", metavar="PROFILE", shell_complete=base.complete_stored_key)
@base.json_option("Print the result as JSON.")
def key_rm(name: str, as_json: bool) -> None:
    """Delete PROFILE's key (and the hosts it is bound to) from the keyring, also for a removed profile."""
    from agentcfg import keystore, profiles, report

    environ = base.environ()
    known = profiles.load_all(environ)
    store = keystore.KeyStore(environ, known.get(name))
    removed = store.delete(name)
    if not removed and name not in known:
        profiles.get(name, environ)  # the usual unknown-profile error, with suggestions
    if as_json:
        click.echo(report.dumps({"profile": name, "backend": store.label, "removed": removed}))
    elif removed:
        click.echo(f"Removed the key for {name} from the {store.label}.")
    else:
        click.echo(f"No key was stored for {name} in the {store.label}; nothing to remove.")


@key.command("list")
@base.json_option("Print the list as JSON (masked tails, never keys).")
def key_list(as_json: bool) -> None:
    """Every profile: the variable it uses, whether the keyring holds its key (masked), whether it is exported.

    Without a usable keyring the profiles are still listed (exit status 0), the keyring column "unavailable".
    """
    from agentcfg import key_commands, report

    table = key_commands.key_table(base.environ())
    if as_json:
        base.print_json(table.as_json())
        return
    if table.unavailable:
        keyed = table.first_keyed
        way_out = f"`{fixes.key_set(keyed)}` lists the ways to get one" if keyed else "see `agentcfg key --help`"
        heading = f"unavailable ({table.unavailable}); exported variables still work, {way_out}"
    click.echo(report.keys_text(heading if table.unavailable else str(table.label), table.rows))
    base.emit_notes(table.notes)


# -- exec / env --------------------------------------------------------------------------------------


def _profile_variables(found: Any, environ: dict[str, str]) -> tuple[dict[str, str], dict[str, str]]:
    """The variables `exec` and `env` set (the profile's key, keyring first, and AGENTCFG_PROFILE), and where
    each comes from ("agentcfg", "keyring", "environment")."""
    from agentcfg import key_rules

    variables, sources = {"AGENTCFG_PROFILE": found.name}, {"AGENTCFG_PROFILE": "agentcfg"}
    if found.key_env:
        from agentcfg import keystore  # the keyring's modules: only for a profile with a key

        key_rules.refuse_runtime_variable(found)
        resolved = keystore.resolve_key(found, environ)
        variables[found.key_env] = resolved.value
        sources[found.key_env] = resolved.source
        if resolved.note:  # not in `key get`: its stderr may be an agent's (apiKeyHelper)
            base.emit_notes([resolved.note])
    for variable, value in _mcp_secrets(environ).items():
        variables.setdefault(variable, value)
        sources.setdefault(variable, "keyring")
    return variables, sources


def _mcp_secrets(environ: dict[str, str]) -> dict[str, str]:
    """The secrets of agentcfg's MCP servers (agentcfg.mcp.secrets.for_agents): none without its set file."""
    from agentcfg.mcp import store

    if store.read_text(environ) is None:
        return {}
    from agentcfg.mcp import secrets

    found, notes = secrets.for_agents(store.load(environ), environ)
    base.emit_notes(notes)
    return found


@click.command(
    "exec",
    context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False},
)
@base.json_option("Errors as JSON on stdout (before PROFILE); on success the output is COMMAND's own.")
@click.argument("name", metavar="PROFILE", shell_complete=base.complete_profile)
@click.argument("command", nargs=-1, required=True, type=click.UNPROCESSED)
def exec_command(as_json: bool, name: str, command: tuple[str, ...]) -> None:
    """Run COMMAND with PROFILE's key in its variable, e.g. `agentcfg exec taotoken -- opencode`.

    When COMMAND is an agent (codex, qwen, opencode, claude), that one process runs on PROFILE
    whatever the agents' files point at, and no file of theirs changes: Codex gets `-c` overrides,
    Claude Code `--settings` with a file in agentcfg's runtime directory, opencode
    OPENCODE_CONFIG_CONTENT, qwen-code a system settings file (QWEN_CODE_SYSTEM_SETTINGS_PATH).
    Two of them can run side by side on two profiles. Any other COMMAND gets the key's variable only.

    COMMAND replaces agentcfg (exec), so its stdin, stdout, stderr, signals and exit status are
    its own. Exit status 4: no key stored or exported (COMMAND is not run); 127: COMMAND not found;
    126: not executable; 2: the agent cannot run on PROFILE. Options of agentcfg's (--json) go before
    PROFILE: after it every word is COMMAND's.
    """
    from agentcfg import launch, profiles

    if command[:1] == ("--",):  # click keeps the separator once it stops parsing options
        command = command[1:]
    if not command:
        raise click.UsageError("give the command to run after --, e.g. agentcfg exec taotoken -- opencode")
    environ = base.environ()
    found = profiles.get(name, environ)
    run = launch.exec_run(found, command, _profile_variables(found, environ)[0], environ)
    base.emit_notes(list(run.notes))
    _replace_with(run.argv, {**environ, **run.variables}, run.key_files)


def _replace_with(command: tuple[str, ...], child: dict[str, str], key_files: tuple[Any, ...]) -> None:
    """Become `command` (exec on POSIX; elsewhere run it and exit with its status), `key_files` removed after."""
    from agentcfg import launch

    sys.stdout.flush()
    sys.stderr.flush()
    try:
        if os.name == "posix":
            launch.remove_when_ended(key_files)
            os.execvpe(command[0], list(command), child)
        import subprocess

        try:
            sys.exit(subprocess.call(list(command), env=child))
        finally:
            launch.remove(key_files)
    except FileNotFoundError:
        raise AgentcfgError(
            f"command not found: {command[0]}", hint="Check the name, or give its full path.", exit_code=Exit.NOT_FOUND
        ) from None
    except PermissionError:
        raise AgentcfgError(
            f"cannot run {command[0]}: permission denied",
            hint=f"Make it executable: `{fixes.command('chmod', '+x', command[0])}`, or run it with its interpreter.",
            exit_code=Exit.NOT_EXECUTABLE,
        ) from None


@click.command("env")
@click.argument("name", metavar="PROFILE", shell_complete=base.complete_profile)
@click.option("--shell", type=click.Choice(["bash", "zsh", "fish", "powershell"]), help="Default: from $SHELL.")
@base.json_option("Print which variables would be set as JSON: names, sources and masked tails, never the key.")
def env_command(name: str, shell: str | None, as_json: bool) -> None:
    """Print PROFILE's variables (its key included) as lines to eval in your shell.

    No key stored or exported: exit status 4 and nothing printed.

    \b
    bash/zsh:    eval "$(agentcfg env taotoken)"
    fish:        agentcfg env taotoken --shell fish | source
    PowerShell:  agentcfg env taotoken --shell powershell | Invoke-Expression
    """
    from agentcfg import redact, shells

    environ = base.environ()
    from agentcfg import profiles

    shell = shell or shells.detect(environ)
    variables, sources = _profile_variables(profiles.get(name, environ), environ)
    if as_json:
        described = {
            variable: {
                "set": True,
                "source": sources[variable],
                "tail": None if sources[variable] == "agentcfg" else redact.tail(value),
                "value": value if sources[variable] == "agentcfg" else None,  # only agentcfg's own, never a key
            }
            for variable, value in variables.items()
        }
        base.print_json({"profile": name, "shell": shell, "variables": described})
        return
    out = print_secret(shells.assignments(variables, shell))
    if out.isatty():
        again = fixes.command("agentcfg", "env", name, "--shell", shell)
        base.emit_notes([f"to load these into this shell: {shells.usage(shell, again)}"])
