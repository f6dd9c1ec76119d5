"""Server-sent events, parsed incrementally: bytes go in as they arrive, complete events come out.

A network read can end anywhere: inside a `data:` line, between `\\r` and `\\n`, inside a UTF-8
character. The parser keeps the unfinished line as bytes and decodes only complete lines, so an
event is reported at the read that completed it, and never earlier.
"""

from __future__ import annotations

import re

from agentcfg.lazyclass import dataclass

_LINE_END = re.compile(rb"\r\n|\r|\n")


@dataclass(frozen=True)
class Event:
    """One server-sent event: its data lines joined, and its `event:` name."""

    data: str
    event: str = ""


class Parser:
    """The SSE line protocol (WHATWG): `data:` lines joined by newlines, `event:`, `:` comments,
    CRLF, LF or CR line ends, one event per blank line."""

    def __init__(self) -> None:
        self._buffer = b""
        self._data: list[str] = []
        self._event = ""

    def feed(self, chunk: bytes) -> list[Event]:
        """The events that `chunk` completes."""
        buffer = self._buffer + chunk if self._buffer else chunk
        events: list[Event] = []
        if b"\r" not in buffer:  # the common case (vLLM, gateways: LF only), at half the cost
            *lines, self._buffer = buffer.split(b"\n")
            for line in lines:
                self._line(line, events)
            return events
        start = 0
        for match in _LINE_END.finditer(buffer):
            if match.group() == b"\r" and match.end() == len(buffer):
                break  # maybe the first half of \r\n: decide when the next byte arrives
            self._line(buffer[start : match.start()], events)
            start = match.end()
        self._buffer = buffer[start:]
        return events

    def close(self) -> list[Event]:
        """At the end of the stream: a last line or event without its terminator still counts
        (servers that omit the final blank line are common; vLLM's own benchmark accepts them)."""
        events: list[Event] = []
        if self._buffer:
            self._line(self._buffer.rstrip(b"\r"), events)
            self._buffer = b""
        self._line(b"", events)
        return events

    def _line(self, raw: bytes, events: list[Event]) -> None:
        if not raw:
            data = "\n".join(self._data)
            if data:  # an event with empty data is not dispatched
                events.append(Event(data, self._event))
            self._data, self._event = [], ""
            return
        line = raw.decode("utf-8", "replace")
        if line.startswith(":"):
            return
        name, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value
