"""`key ...`, `exec`, `env`: a profile's key, stored, and handed to an agent."""

from __future__ import annotations

import os
import sys
from typing import Any, TextIO

import click

from agentcfg.cli import base
from agentcfg.errors import AgentcfgError

# -- keys --------------------------------------------------------------------------------------------


def print_secret(text: str) -> TextIO:
    """Write to the real stdout, around the scrubber: for the two commands whose job is to print a key."""
    from agentcfg.redact import RedactingStream

    out = sys.stdout.raw if isinstance(sys.stdout, RedactingStream) else sys.stdout
    out.write(text)
    out.flush()
    return out


def read_key(profile: str) -> str:
    """PROFILE's key: typed at a hidden prompt on a terminal, else one line of stdin."""
    if sys.stdin.isatty():
        return click.prompt(f"Key for {profile} (input hidden)", hide_input=True, prompt_suffix=": ", err=True)
    line = sys.stdin.readline()
    return line.removesuffix("\n").removesuffix("\r")


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
    value = read_key(name)
    if reason := keystore.check_value(value):
        raise AgentcfgError(
            f"not storing the key for {name}: {reason}",
            hint=f"Give the key alone: `agentcfg key set {name}` asks for it (input hidden).",
        )
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
def key_get(name: str) -> None:
    """Print PROFILE's key and nothing else (for helper commands such as Claude Code's apiKeyHelper).

    The keyring's entry wins; without one, a value already exported in the profile's variable.
    """
    from agentcfg import keystore, profiles

    environ = base.environ()
    found = profiles.find(name, environ)  # yours or a built-in: no project file is read
    if not found.key_env:
        raise keystore.not_keyed(found)
    resolved = keystore.resolve(found, environ)
    assert resolved is not None
    print_secret(resolved.value + "\n")


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
    """Every profile: the variable it uses, whether the keyring holds its key (masked), whether it is exported."""
    from agentcfg import keystore, profiles, redact, report

    environ = base.environ()
    store = keystore.KeyStore(environ)
    rows = []
    for name, found in sorted(profiles.load_all(environ).items()):
        value = store.get(name) if found.key_env else None
        rows.append(
            {
                "profile": name,
                "key_env": found.key_env,
                "stored": bool(value) if found.key_env else None,
                "tail": redact.tail(value) if value else None,
                "in_environment": bool(found.key_env and environ.get(found.key_env)),
                "bound_to": store.origins(name) if value else None,  # None also for a key stored before binding
            }
        )
    if as_json:
        data = {"backend": store.label, "backend_class": keystore.backend_name(store.backend), "profiles": rows}
        click.echo(report.dumps(data))
    else:
        click.echo(report.keys_text(store.label, rows))


# -- exec / env --------------------------------------------------------------------------------------


def _profile_variables(name: str, environ: dict[str, str]) -> dict[str, str]:
    """The variables `exec` and `env` set: the profile's key (keyring first) and AGENTCFG_PROFILE."""
    from agentcfg import keystore, profiles

    found = profiles.get(name, environ)
    variables = {"AGENTCFG_PROFILE": found.name}
    resolved = keystore.resolve(found, environ)
    if resolved:
        variables[str(found.key_env)] = resolved.value
        if resolved.note:
            base.emit_notes([resolved.note])
    return variables


@click.command(
    "exec",
    context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False},
)
@click.argument("name", metavar="PROFILE", shell_complete=base.complete_profile)
@click.argument("command", nargs=-1, required=True, type=click.UNPROCESSED)
def exec_command(name: str, command: tuple[str, ...]) -> None:
    """Run COMMAND with PROFILE's key in its variable, e.g. `agentcfg exec taotoken -- opencode`.

    COMMAND replaces agentcfg (exec), so its stdin, stdout, stderr, signals and exit status are
    its own. Exit status 127: COMMAND not found; 126: not executable.
    """
    if command[:1] == ("--",):  # click keeps the separator once it stops parsing options
        command = command[1:]
    if not command:
        raise click.UsageError("give the command to run after --, e.g. agentcfg exec taotoken -- opencode")
    environ = base.environ()
    child = {**environ, **_profile_variables(name, environ)}
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        if os.name == "posix":
            os.execvpe(command[0], list(command), child)
        import subprocess

        sys.exit(subprocess.call(list(command), env=child))
    except FileNotFoundError:
        error = AgentcfgError(f"command not found: {command[0]}", hint="Check the name, or give its full path.")
        error.exit_code = 127
        raise error from None
    except PermissionError:
        error = AgentcfgError(f"cannot run {command[0]}: permission denied", hint="Is it executable?")
        error.exit_code = 126
        raise error from None


@click.command("env")
@click.argument("name", metavar="PROFILE", shell_complete=base.complete_profile)
@click.option("--shell", type=click.Choice(["bash", "zsh", "fish", "powershell"]), help="Default: from $SHELL.")
def env_command(name: str, shell: str | None) -> None:
    """Print PROFILE's variables (its key included) as lines to eval in your shell.

    \b
    bash/zsh:    eval "$(agentcfg env taotoken)"
    fish:        agentcfg env taotoken --shell fish | source
    PowerShell:  agentcfg env taotoken --shell powershell | Invoke-Expression
    """
    from agentcfg import shells

    environ = base.environ()
    shell = shell or shells.detect(environ)
    out = print_secret(shells.assignments(_profile_variables(name, environ), shell))
    if out.isatty():
        again = f"agentcfg env {name} --shell {shell}"
        base.emit_notes([f"to load these into this shell: {shells.usage(shell, again)}"])
