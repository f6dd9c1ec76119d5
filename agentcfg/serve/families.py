"""The `vllm serve` flags each model family needs for agents (tools always; reasoning where the model
thinks), with the source of each row. One table: `serve` builds its command from it, doctor compares a
running server's flags with it. Rows are matched in order against a model id or a weights path, so a
more specific family (DeepSeek-V3.2) comes before the one it would also match (DeepSeek-V3).
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Family:
    name: str
    pattern: str  # a regex, searched in the lower-cased model id or weights path
    tool_parser: str
    reasoning_parser: str | None = None
    tokenizer_mode: str | None = None
    chat_template: str | None = None  # a path inside vLLM's source tree (examples/...) or None
    thinking: bool = False  # a reasoning model whose tool turns need the reasoning passed back
    min_window_note: str | None = None
    source: str = ""

    def flags(self) -> list[str]:
        """The family's own flags, in the order `vllm serve --help` lists them."""
        out = []
        if self.tokenizer_mode:
            out += ["--tokenizer-mode", self.tokenizer_mode]
        out += ["--tool-call-parser", self.tool_parser]
        if self.reasoning_parser:
            out += ["--reasoning-parser", self.reasoning_parser]
        if self.chat_template:
            out += ["--chat-template", self.chat_template]
        return out


FAMILIES: tuple[Family, ...] = (
    Family(
        "deepseek-v4",
        r"deepseek[-_. ]?v4",
        "deepseek_v4",
        "deepseek_v4",
        "deepseek_v4",
        thinking=True,
        min_window_note="Think Max needs a window of at least 393,216 tokens",
        source="recipes.vllm.ai/deepseek-ai/DeepSeek-V4-Flash (tool calling, reasoning)",
    ),
    Family(
        "deepseek-v3.2",
        r"deepseek[-_. ]?v3[._]2",
        "deepseek_v32",
        "deepseek_v3",
        "deepseek_v32",
        thinking=True,
        source="vllm-project/recipes DeepSeek/DeepSeek-V3_2.md; vllm PR #29837",
    ),
    Family(
        "deepseek-v3.1",
        r"deepseek[-_. ]?v3[._]1",
        "deepseek_v31",
        "deepseek_v3",
        chat_template="examples/tool_chat_template_deepseekv31.jinja",
        thinking=True,
        source="vllm-project/recipes DeepSeek/DeepSeek-V3_1.md; tool parser vllm PR #23454",
    ),
    Family(
        "deepseek-r1-distill",
        r"deepseek[-_. ]?r1[-_. ]distill",
        "hermes",
        "deepseek_r1",
        thinking=True,
        source="docs.vllm.ai reasoning_outputs (deepseek_r1); distills carry their base model's tool format",
    ),
    Family(
        "deepseek-r1",
        r"deepseek[-_. ]?r1",
        "deepseek_v3",
        "deepseek_r1",
        thinking=True,
        source="docs.vllm.ai tool_calling (deepseek_v3) and reasoning_outputs (deepseek_r1)",
    ),
    Family(
        "deepseek-v3",
        r"deepseek[-_. ]?v3",
        "deepseek_v3",
        source="docs.vllm.ai tool_calling: DeepSeek-V3 (deepseek_v3)",
    ),
)


def detect(*names: str | None) -> Family | None:
    """The family of the first name (model id, weights path) a row matches, in the order given."""
    for name in names:
        if not name:
            continue
        lowered = name.lower()
        for family in FAMILIES:
            if re.search(family.pattern, lowered):
                return family
    return None


def get(name: str) -> Family | None:
    return next((f for f in FAMILIES if f.name == name), None)
