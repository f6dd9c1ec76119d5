"""agentcfg.bench.sse: events come out whole wherever the network splits the bytes."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from agentcfg.bench.sse import Event, Parser
from tests.conftest import SHARED_FIXTURES


def parse_in_pieces(data: bytes, cuts: list[int]) -> list[Event]:
    parser, events, start = Parser(), [], 0
    for cut in sorted(set(cuts)):
        events += parser.feed(data[start:cut])
        start = cut
    events += parser.feed(data[start:])
    return events + parser.close()


def test_data_lines_events_comments_and_line_ends():
    data = b': ping\r\nevent: delta\r\ndata: {"a":\r\ndata: 1}\r\n\r\ndata:x\rdata: y\r\rdata: [DONE]\n\n'
    assert parse_in_pieces(data, []) == [Event('{"a":\n1}', "delta"), Event("x\ny"), Event("[DONE]")]


def test_an_event_is_reported_only_when_its_blank_line_arrives():
    parser = Parser()
    assert parser.feed(b"data: one\n") == []
    assert parser.feed(b"\n") == [Event("one")]
    assert parser.feed(b"data: two\r") == []  # a CR at the end may be half of CRLF
    assert parser.feed(b"\n\r\n") == [Event("two")]


def test_a_multibyte_character_split_between_reads():
    text = "data: café ✓\n\n".encode()
    cut = text.index("✓".encode()) + 1
    assert parse_in_pieces(text, [cut]) == [Event("café ✓")]


def test_a_last_event_without_its_blank_line_still_counts():
    parser = Parser()
    assert parser.feed(b"data: [DONE]") == []
    assert parser.close() == [Event("[DONE]")]


def test_the_real_vllm_stream_in_every_two_piece_split():
    data = (SHARED_FIXTURES / "vllm-0.32-cpu" / "b_chat_stream_include_usage.txt").read_bytes()
    whole = parse_in_pieces(data, [])
    assert len(whole) == 11 and whole[-1] == Event("[DONE]")
    assert json.loads(whole[-2].data)["usage"]["completion_tokens"] == 8
    for cut in range(0, len(data), 7):
        assert parse_in_pieces(data, [cut]) == whole


events = st.lists(
    st.tuples(
        st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\n"), max_size=30),
        st.sampled_from(["", "delta"]),
    ),
    max_size=8,
)


@given(events, st.sampled_from([b"\n", b"\r\n", b"\r"]), st.lists(st.integers(min_value=0, max_value=400)))
def test_any_stream_split_anywhere_gives_the_same_events(items, newline, cuts):
    data = b""
    for text, name in items:
        if name:
            data += b"event: " + name.encode() + newline
        data += b"data: " + text.encode() + newline + newline
    expected = [Event(text, name) for text, name in items if text]  # empty data: no event (WHATWG)
    assert parse_in_pieces(data, [c for c in cuts if c <= len(data)]) == expected
