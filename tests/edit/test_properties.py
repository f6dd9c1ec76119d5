"""Property tests: whatever else a file holds, an edit changes the owned keys and nothing else."""

from __future__ import annotations

import copy
import json
import string
import sys

import tomlkit
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from agentcfg import edit
from agentcfg.edit import REMOVE

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

SETTINGS = settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# --- JSON / JSONC ---------------------------------------------------------------------------------

PROVIDER = ("provider", "agentcfg-local")
MODEL = (*PROVIDER, "models", "qwen3-coder")
JSON_ASSIGNMENTS = [
    (("model",), "agentcfg-local/qwen3-coder"),
    ((*PROVIDER, "npm"), "@ai-sdk/openai-compatible"),
    ((*PROVIDER, "name"), "agentcfg: lokal — ü"),
    ((*PROVIDER, "options", "baseURL"), "http://127.0.0.1:8000/v1"),
    ((*PROVIDER, "options", "apiKey"), REMOVE),
    ((*MODEL, "tool_call"), True),
    ((*MODEL, "limit", "context"), 65536),
    ((*MODEL, "limit", "output"), 27768),
]
JSON_OWNED = {
    "model": "agentcfg-local/qwen3-coder",
    "provider": {
        "agentcfg-local": {
            "npm": "@ai-sdk/openai-compatible",
            "name": "agentcfg: lokal — ü",
            "options": {"baseURL": "http://127.0.0.1:8000/v1"},
            "models": {"qwen3-coder": {"tool_call": True, "limit": {"context": 65536, "output": 27768}}},
        }
    },
}

json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**63)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=10)
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=6,
)
unrelated_json_key = st.text(max_size=10).filter(lambda k: not k.startswith(("model", "provider")))
json_docs = st.dictionaries(unrelated_json_key, json_values, max_size=5)
indents = st.sampled_from([None, 2, 4, "\t"])


def _jsonc(text: str) -> str:
    """Add a trailing comma after every last member or item and a // comment to every line."""
    lines = text.split("\n")
    out = []
    for i, line in enumerate(lines):
        following = lines[i + 1].strip() if i + 1 < len(lines) else ""
        if following[:1] in ("}", "]") and not line.endswith(("{", "[", ",")):
            line += ","
        out.append(f"{line} // ☃c{i}☃")
    return "\n".join(out) + "\n"


@SETTINGS
@given(doc=json_docs, indent=indents, comments=st.booleans())
def test_json_only_owned_keys_change(doc, indent, comments):
    text = json.dumps(doc, indent=indent, ensure_ascii=False) + "\n"
    if comments:
        text = _jsonc(text)
    assert edit.load("json", text) == doc
    out = edit.apply("json", text, JSON_ASSIGNMENTS)
    assert edit.load("json", out) == {**doc, **JSON_OWNED}
    if not comments:
        assert json.loads(out) == {**doc, **JSON_OWNED}  # strict JSON stays strict
    for marker in ("// ☃c", ","):
        assert out.count(marker) >= text.count(marker)
    for i in range(text.count("// ☃c")):
        assert out.count(f"// ☃c{i}☃") == 1


@SETTINGS
@given(doc=json_docs.filter(bool), indent=st.sampled_from([2, 4, "\t"]), comments=st.booleans())
def test_json_insert_then_remove_gives_back_the_original_bytes(doc, indent, comments):
    text = json.dumps(doc, indent=indent, ensure_ascii=False) + "\n"
    if comments:
        text = _jsonc(text)
    out = edit.apply("json", text, JSON_ASSIGNMENTS)
    assert edit.apply("json", out, [(PROVIDER[:1], REMOVE), (("model",), REMOVE)]) == text


@SETTINGS
@given(doc=json_docs, indent=indents, comments=st.booleans())
def test_json_reapplying_is_byte_identical(doc, indent, comments):
    text = json.dumps(doc, indent=indent, ensure_ascii=False)
    if comments:
        text = _jsonc(text)
    once = edit.apply("json", text, JSON_ASSIGNMENTS)
    assert edit.apply("json", once, JSON_ASSIGNMENTS) is once
    assert edit.apply("json", once, list(reversed(JSON_ASSIGNMENTS))) is once


@SETTINGS
@given(
    doc=json_docs,
    old_model=json_scalars,
    old_provider=st.dictionaries(st.text(max_size=6), json_values, max_size=3),
    other_providers=st.dictionaries(
        st.text(max_size=8).filter(lambda k: k != "agentcfg-local"), json_values, max_size=3
    ),
    indent=indents,
)
def test_json_existing_owned_keys_are_updated_in_place(doc, old_model, old_provider, other_providers, indent):
    full = {**doc, "model": old_model, "provider": {**other_providers, "agentcfg-local": old_provider}}
    text = json.dumps(full, indent=indent, ensure_ascii=False)
    out = edit.apply("json", text, JSON_ASSIGNMENTS)
    got = edit.load("json", out)
    expected = copy.deepcopy(full)
    expected["model"] = JSON_OWNED["model"]
    mine = expected["provider"]["agentcfg-local"]
    for keypath, value in JSON_ASSIGNMENTS[1:]:
        node = mine
        for key in keypath[2:-1]:
            if not isinstance(node.get(key), dict):
                node[key] = {}
            node = node[key]
        if value is REMOVE:
            node.pop(keypath[-1], None)
        else:
            node[keypath[-1]] = value
    assert got == expected
    assert list(got) == list(full)  # key order kept


# --- dotenv -------------------------------------------------------------------------------------

SAFE = string.ascii_letters + string.digits + "_./:@+,~-"
QUOTABLE = SAFE + " #$={}!%^&*()[];<>?|"

DOTENV_ASSIGNMENTS = [
    (("OPENAI_API_KEY",), "agentcfg-no-key"),
    (("OPENAI_BASE_URL",), "http://127.0.0.1:8000/v1"),
    (("OPENAI_MODEL",), "Qwen/Qwen3-Coder 30B #1"),  # needs quoting when written unquoted
]
DOTENV_OWNED = {k[0]: v for k, v in DOTENV_ASSIGNMENTS}

env_keys = st.builds(
    str.__add__,
    st.sampled_from(string.ascii_letters + "_"),
    st.text(string.ascii_letters + string.digits + "_", max_size=11),
).filter(lambda k: not k.startswith("OPENAI"))


@st.composite
def dotenv_binding(draw, key=env_keys):
    """(line, key, value, export prefix, comment) for one KEY=VALUE line in a style people write."""
    name = draw(key)
    export = draw(st.sampled_from(["", "export "]))
    spacing = draw(st.sampled_from(["=", " = ", "= ", " ="]))
    style = draw(st.sampled_from(["bare", "single", "double"]))
    comment = draw(st.sampled_from(["", " # note", "   # a # b"]))
    if style == "bare":
        value = draw(st.text(SAFE, min_size=1, max_size=16))
        rendered = value
    else:
        value = draw(st.text(QUOTABLE, max_size=16))
        quote = "'" if style == "single" else '"'
        rendered = quote + value + quote
    return f"{export}{name}{spacing}{rendered}{comment}", name, value, export, comment


filler = st.sampled_from(["", "# a comment", "   ", "# KEY=not a binding", "  # indented comment"])


@st.composite
def dotenv_files(draw):
    """(text, bindings as a dict, last wins), from bindings, comments and blank lines."""
    lines, values = [], {}
    for item in draw(st.lists(st.one_of(dotenv_binding(), filler), max_size=12)):
        if isinstance(item, tuple):
            line, name, value, _, _ = item
            values[name] = value
        else:
            line = item
        lines.append(line)
    text = "\n".join(lines)
    if lines and draw(st.booleans()):
        text += "\n"
    return text, values


def _is_owned(line: str) -> bool:
    return line.lstrip().removeprefix("export ").startswith("OPENAI_")


@SETTINGS
@given(file=dotenv_files())
def test_dotenv_only_owned_keys_change(file):
    text, values = file
    assert edit.load("dotenv", text) == values
    out = edit.apply("dotenv", text, DOTENV_ASSIGNMENTS)
    assert edit.load("dotenv", out) == {**values, **DOTENV_OWNED}
    assert out.startswith(text)  # everything there before is kept, byte for byte
    assert out.endswith("\n")
    assert edit.apply("dotenv", out, DOTENV_ASSIGNMENTS) is out


@SETTINGS
@given(
    file=dotenv_files(),
    owned=st.lists(
        st.tuples(st.sampled_from(["OPENAI_BASE_URL", "OPENAI_MODEL", "OPENAI_API_KEY"]), st.integers(0, 12)),
        unique_by=lambda t: t[0],
        min_size=1,
    ),
    data=st.data(),
)
def test_dotenv_existing_owned_lines_are_rewritten_in_place(file, owned, data):
    text, values = file
    lines = text.split("\n") if text else []
    styles = {}
    for name, position in owned:
        line, _, value, export, comment = data.draw(dotenv_binding(key=st.just(name)))
        position = min(position, len(lines))
        lines.insert(position, line)
        values[name] = value
        styles[name] = (export, comment)
    text = "\n".join(lines) + "\n"
    assignments = [(k, REMOVE) if k == ("OPENAI_API_KEY",) else (k, v) for k, v in DOTENV_ASSIGNMENTS]
    out = edit.apply("dotenv", text, assignments)

    expected = {
        **values,
        "OPENAI_BASE_URL": DOTENV_OWNED["OPENAI_BASE_URL"],
        "OPENAI_MODEL": DOTENV_OWNED["OPENAI_MODEL"],
    }
    expected.pop("OPENAI_API_KEY", None)
    assert edit.load("dotenv", out) == expected
    before, after = text.split("\n"), out.split("\n")
    # the lines not owned are all there, unchanged and in order
    assert [line for line in after if not _is_owned(line)] == [line for line in before if not _is_owned(line)]
    assert not any("OPENAI_API_KEY" in line for line in after)
    for name, (export, comment) in styles.items():
        if name == "OPENAI_API_KEY":
            continue
        # rewritten where it was, after the same unowned lines; `export` and the comment stay
        (old,) = [i for i, line in enumerate(before) if line.startswith(export + name)]
        (new,) = [i for i, line in enumerate(after) if line.startswith(export + name)]
        assert after[new].endswith(comment)
        assert [b for b in before[:old] if not _is_owned(b)] == [a for a in after[:new] if not _is_owned(a)]
    assert edit.apply("dotenv", out, assignments) is out


# --- TOML ----------------------------------------------------------------------------------------

TOML_PROVIDER = ("model_providers", "agentcfg-local")
TOML_ASSIGNMENTS = [
    (("model",), "qwen3-coder"),
    (("model_provider",), "agentcfg-local"),
    (("model_context_window",), 65536),
    ((*TOML_PROVIDER, "name"), "agentcfg: local"),
    ((*TOML_PROVIDER, "base_url"), "http://127.0.0.1:8000/v1"),
    ((*TOML_PROVIDER, "wire_api"), "responses"),
    ((*TOML_PROVIDER, "env_key"), REMOVE),
]
TOML_OWNED = {
    "model": "qwen3-coder",
    "model_provider": "agentcfg-local",
    "model_context_window": 65536,
    "model_providers": {
        "agentcfg-local": {"name": "agentcfg: local", "base_url": "http://127.0.0.1:8000/v1", "wire_api": "responses"}
    },
}

toml_keys = st.text(string.ascii_letters + string.digits + "_-. /ü", min_size=1, max_size=10).filter(
    lambda k: not k.startswith("model")
)
toml_scalars = (
    st.booleans()
    | st.integers(-(2**63), 2**63 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12).filter(lambda s: "\r" not in s)
)
toml_values = toml_scalars | st.lists(toml_scalars, max_size=3)
toml_tables = st.dictionaries(toml_keys, toml_values | st.dictionaries(toml_keys, toml_values, max_size=3), max_size=4)
toml_docs = st.dictionaries(toml_keys, toml_values | toml_tables, max_size=6)


def _dump(doc: dict) -> str:
    text = tomlkit.dumps(doc)
    assume(tomllib.loads(text) == doc)  # only documents tomlkit itself writes faithfully
    return text


def _is_subsequence(small: list[str], big: list[str]) -> bool:
    it = iter(big)
    return all(any(line == other for other in it) for line in small)


@SETTINGS
@given(doc=toml_docs)
def test_toml_only_owned_keys_change(doc):
    text = _dump(doc)
    out = edit.apply("toml", text, TOML_ASSIGNMENTS)
    data = tomllib.loads(out)
    assert data == {**doc, **TOML_OWNED}
    assert _is_subsequence(text.split("\n"), out.split("\n"))  # every line kept, in order
    assert edit.apply("toml", out, TOML_ASSIGNMENTS) is out


@SETTINGS
@given(
    doc=toml_docs,
    old=st.fixed_dictionaries(
        {},
        optional={
            "model": toml_scalars,
            "model_provider": toml_scalars,
            "model_context_window": toml_scalars,
        },
    ),
    other_providers=st.dictionaries(
        toml_keys.filter(lambda k: k != "agentcfg-local"),
        st.dictionaries(toml_keys, toml_values, max_size=3),
        max_size=2,
    ),
    mine=st.dictionaries(st.sampled_from(["name", "base_url", "env_key", "wire_api", "extra"]), toml_scalars),
)
def test_toml_existing_owned_keys_are_updated(doc, old, other_providers, mine):
    full = {**doc, **old, "model_providers": {**other_providers, "agentcfg-local": mine}}
    text = _dump(full)
    out = edit.apply("toml", text, TOML_ASSIGNMENTS)
    expected = copy.deepcopy(full)
    expected.update({k: v for k, v in TOML_OWNED.items() if k != "model_providers"})
    expected["model_providers"]["agentcfg-local"].update(TOML_OWNED["model_providers"]["agentcfg-local"])
    expected["model_providers"]["agentcfg-local"].pop("env_key", None)
    assert tomllib.loads(out) == expected
    assert edit.apply("toml", out, TOML_ASSIGNMENTS) is out


# --- TOML: the providers in every layout the format allows ---------------------------------------------

TOML_PROVIDER = ("model_providers", "agentcfg-local")
HELPER_ASSIGNMENTS = [
    *TOML_ASSIGNMENTS[:3],
    ((*TOML_PROVIDER, "name"), "agentcfg: local"),
    ((*TOML_PROVIDER, "base_url"), "http://127.0.0.1:8000/v1"),
    ((*TOML_PROVIDER, "wire_api"), "responses"),
    ((*TOML_PROVIDER, "auth", "command"), "agentcfg"),
    ((*TOML_PROVIDER, "auth", "args"), ["key", "get", "local"]),
]
provider_names = st.text(string.ascii_lowercase + "-_", min_size=1, max_size=8).filter(lambda k: k != "agentcfg-local")
provider_tables = st.dictionaries(
    provider_names, st.dictionaries(toml_keys, toml_scalars, min_size=1, max_size=3), max_size=3
)
LAYOUTS = ["headers", "dotted inline", "dotted leaves", "one inline table", "super table"]


def _toml(value) -> str:
    if isinstance(value, dict):  # inline, as a hand-written file would have it
        return "{ " + ", ".join(f"{_bare(k)} = {_toml(v)}" for k, v in value.items()) + " }"
    return tomlkit.item(value).as_string()


def _bare(key: str) -> str:
    return tomlkit.key(key).as_string()


def _providers_text(providers: dict, layout: str) -> tuple[str, str]:
    """(text for the top level, text for after the tables) writing `providers` in `layout`."""
    if not providers:
        return "", ""
    if layout == "headers":
        return "", "".join(
            f"\n[model_providers.{_bare(name)}]\n" + "".join(f"{_bare(k)} = {_toml(v)}\n" for k, v in table.items())
            for name, table in providers.items()
        )
    if layout == "dotted inline":
        return "".join(f"model_providers.{_bare(n)} = {_toml(t)}\n" for n, t in providers.items()), ""
    if layout == "dotted leaves":
        lines = [
            f"model_providers.{_bare(n)}.{_bare(k)} = {_toml(v)}\n" for n, t in providers.items() for k, v in t.items()
        ]
        return "".join(lines), ""
    if layout == "one inline table":
        return f"model_providers = {_toml(providers)}\n", ""
    lines = [f"{_bare(n)}.{_bare(k)} = {_toml(v)}\n" for n, t in providers.items() for k, v in t.items()]
    return "", "\n[model_providers]\n" + "".join(lines)


@SETTINGS
@given(doc=toml_docs, providers=provider_tables, layout=st.sampled_from(LAYOUTS), crlf=st.booleans())
def test_toml_every_provider_layout_switches_and_undoes(doc, providers, layout, crlf):
    top, tail = _providers_text(providers, layout)
    body = _dump(doc)
    text = top + body + tail
    assume(tomllib.loads(text) == {**doc, **({"model_providers": providers} if providers else {})})
    if crlf:
        text = text.replace("\n", "\r\n")
    out = edit.apply("toml", text, HELPER_ASSIGNMENTS)
    data = tomllib.loads(out)
    assert data["model_providers"]["agentcfg-local"]["auth"] == {"command": "agentcfg", "args": ["key", "get", "local"]}
    assert {k: v for k, v in data["model_providers"].items() if k != "agentcfg-local"} == providers
    assert {k: v for k, v in data.items() if not k.startswith("model")} == doc
    assert edit.apply("toml", out, HELPER_ASSIGNMENTS) is out
    if crlf and "\n" in text:
        assert "\n" not in out.replace("\r\n", "")
    back = edit.apply("toml", out, [(k, REMOVE) for k, _ in HELPER_ASSIGNMENTS])
    assert back == text or (not text.endswith("\n") and back == text + ("\r\n" if crlf else "\n"))


toml_literals = st.sampled_from(
    [
        "1_000",
        "0x1F",
        "0o17",
        "0b101",
        "+3",
        "1e3",
        "6.02E+23",
        "-inf",
        "nan",
        "'lit'",
        '"esc\\t\\u00e9"',
        '"""\nml\n"""',
        "'''\nraw\\n'''",
        "1979-05-27",
        "07:32:00",
        "[1, 2, ]",
        "{ a = 1 }",
        "true",
    ]
)


@SETTINGS
@given(literal=toml_literals, where=st.sampled_from(["top", "table", "inline", "dotted"]), comment=st.booleans())
def test_toml_raw_then_verbatim_restores_the_literal(literal, where, comment):
    tail = "  # note" if comment else ""
    text = {
        "top": f"k = {literal}{tail}\nz = 1\n",
        "table": f"[t]\nk = {literal}{tail}\n\n[u]\nx = 1\n",
        "inline": f"t = {{ k = {literal}, y = 2 }}{tail}\n",
        "dotted": f"t.k = {literal}{tail}\n",
    }[where]
    key = ("k",) if where == "top" else ("t", "k")
    original = edit.get("toml", text, key)
    raw = edit.raw("toml", text, key)
    assert raw == literal
    changed = edit.apply("toml", text, [(key, "changed")])
    assume(original == original)  # nan is never equal: nothing to compare against
    assert edit.apply("toml", changed, [(key, edit.Verbatim(original, raw))]) == text
