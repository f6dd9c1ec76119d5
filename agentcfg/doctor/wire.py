"""What a probe is and what came back (Probe, Result), and the few network-stack helpers both the sender and
the rest of doctor share. Imports nothing of agentcfg: probes.py (the request shapes), replies.py (reading
answers) and send.py (httpx) build on it, so none of them imports another in a circle.
"""

from __future__ import annotations

import sys
from dataclasses import field
from types import ModuleType
from typing import Any

from agentcfg.lazyclass import dataclass

# How much of an answer doctor reads, at most: any error page or model list whole, and thousands of events of a
# stream. A model may answer the probe at length (a reasoning model thinks for thousands of tokens, a stream
# with no output bound runs to the window): what is past the limit is never read, and the stream is judged on
# the complete events before it (Result.truncated). Memory stays bounded: one such buffer per probe.
BODY_LIMIT = 1024 * 1024


@dataclass(frozen=True)
class Probe:
    """One request doctor sends, as an agent would send it."""

    kind: str  # models, chat, chat-stream, responses-stream, messages-stream, gemini-stream
    url: str
    headers: tuple[tuple[str, str], ...] = ()
    body: Any = None  # JSON for POST; None for GET
    proxy: str | None = None  # send through this proxy; None: direct
    ca_file: str | None = None  # extra CA certificates the agent trusts (NODE_EXTRA_CA_CERTS, CODEX_CA_CERTIFICATE)

    @property
    def method(self) -> str:
        return "GET" if self.body is None else "POST"

    @property
    def stream(self) -> bool:
        # the Gemini API asks for a stream in its URL (`:streamGenerateContent?alt=sse`), not in the body
        return isinstance(self.body, dict) and (bool(self.body.get("stream")) or "alt=sse" in self.url)


@dataclass
class Result:
    """What came back for a probe: status, headers doctor uses, the body it read, or the error."""

    probe: Probe
    status: int | None = None
    content_type: str = ""
    body: str = ""
    error: str | None = None  # refused, timeout, tls, dns, reset, protocol, proxy, other
    detail: str = ""
    elapsed: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)
    # Doctor stopped reading before the body ended: at BODY_LIMIT, or at the deadline while a stream's events were
    # still coming (replies.still_sending). The body is a prefix; its cut tail is evidence of nothing.
    truncated: bool = False


# Every agent follows redirects, and the same way: Codex's reqwest client (codex-rs/core/src/default_client.rs
# sets no policy: reqwest's default, at most 10) and the fetch of Node and Bun (the OpenAI and Anthropic SDKs,
# the AI SDK) resend a POST as a GET after 301, 302 or 303, keep it a POST after 307 and 308, and drop the
# Authorization header when the redirect leaves the origin. httpx does the same, so probes follow as they do.
REDIRECTS = 10


def error_kind(exc: BaseException) -> str:
    """refused, timeout, tls, dns, reset, protocol, proxy or other; from the cause when httpx wraps it."""
    kind = _kind(exc)
    cause = exc.__cause__ or exc.__context__
    return _kind(cause) if kind == "other" and cause is not None else kind


def _kind(exc: BaseException) -> str:
    import asyncio
    import ssl

    if isinstance(kind := getattr(exc, "kind", None), str):  # plainhttp's errors say which they are
        return kind
    httpx: Any = sys.modules.get("httpx") or _NoHttpx  # an httpx error needs an httpx loaded: never loaded here
    text = f"{type(exc).__name__}: {exc}".lower()
    if isinstance(exc, httpx.ProxyError):
        return "proxy"
    if isinstance(exc, httpx.TooManyRedirects):
        return "redirects"
    if isinstance(exc, (httpx.TimeoutException, asyncio.TimeoutError)):
        return "timeout"
    if isinstance(exc, ssl.SSLError) or "certificate" in text or "ssl" in text:
        return "tls"
    if isinstance(exc, httpx.LocalProtocolError) or "illegal header" in text:
        return "protocol"
    if "name or service not known" in text or "nodename nor servname" in text or "getaddrinfo" in text:
        return "dns"
    if "connection refused" in text or "errno 111" in text or "connect call failed" in text:
        return "refused"
    if isinstance(exc, (httpx.RemoteProtocolError, httpx.ReadError)) or "reset" in text:
        return "reset"
    if isinstance(exc, httpx.ConnectError):
        return "refused"
    return "other"


class _NoHttpx:
    """Stands in for httpx in _kind when it was never imported: no exception is an instance of these."""

    class _Never(Exception):
        pass

    ProxyError = TooManyRedirects = TimeoutException = LocalProtocolError = RemoteProtocolError = _Never
    ReadError = ConnectError = _Never


def verify(ca_file: str | None) -> Any:
    """The system's CAs, plus the agent's extra CA file as it would add them."""
    if not ca_file:
        return True
    import contextlib
    import ssl

    context = ssl.create_default_context()
    with contextlib.suppress(OSError, ssl.SSLError):  # an unreadable CA file: the agent would not trust it either
        context.load_verify_locations(ca_file)
    return context


def import_httpx() -> ModuleType:
    """httpx without its command-line client. `import httpx` also runs `from ._main import main`, which
    imports click, pygments and rich whenever they are installed (pygments often is), only to offer the
    `httpx` command, and falls back to a stub on ImportError. A None in sys.modules makes that import
    fail at once; it is taken out again, so a later `import httpx._main` works."""
    if "httpx" not in sys.modules and "httpx._main" not in sys.modules:
        sys.modules["httpx._main"] = None  # type: ignore[assignment]  # None: that import fails
        try:
            import httpx
        except ImportError:  # an httpx that cannot do without its _main: import it whole, below
            pass
        finally:
            if "httpx._main" in sys.modules and sys.modules["httpx._main"] is None:
                del sys.modules["httpx._main"]
    import httpx

    return httpx
