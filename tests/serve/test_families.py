"""agentcfg.serve.families: which row a model id or weights path gets, and what each row says (pure)."""

from __future__ import annotations

import re

import pytest

from agentcfg.serve import families
from agentcfg.serve.families import FAMILIES

# (a name people serve, the row it must get): ids from the recipes and docs each row cites, and local paths.
EXAMPLES = [
    ("deepseek-ai/DeepSeek-V4-Flash", "deepseek-v4"),
    ("/models/DeepSeek-V4-Pro-FP8", "deepseek-v4"),
    ("DeepSeek-V4.1-Flash", "deepseek-v4.1"),
    ("deepseek-ai/DeepSeek-V3.2-Exp", "deepseek-v3.2"),
    ("deepseek-ai/DeepSeek-V3.1-Terminus", "deepseek-v3.1"),
    ("deepseek-ai/DeepSeek-R1-Distill-Qwen-32B", "deepseek-r1-distill"),
    ("deepseek-ai/DeepSeek-R1-Distill-Llama-70B", "deepseek-r1-distill"),
    ("deepseek-ai/DeepSeek-R1-0528", "deepseek-r1"),
    ("deepseek-ai/DeepSeek-V3-0324", "deepseek-v3"),
    ("Qwen/Qwen3-Coder-30B-A3B-Instruct", "qwen3-coder"),
    ("Qwen/Qwen3-Coder-480B-A35B-Instruct-FP8", "qwen3-coder"),
    ("Qwen/Qwen3.5-397B-A17B", "qwen3.5"),
    ("Qwen/Qwen3.6-35B-A3B-FP8", "qwen3.5"),
    ("Qwen/Qwen3-32B-AWQ", "qwen3"),
    ("Qwen/Qwen3-30B-A3B-Thinking-2507", "qwen3"),
    ("Qwen/Qwen3-235B-A22B-Instruct-2507", "qwen3-instruct"),
    ("Qwen/Qwen3-Next-80B-A3B-Instruct", "qwen3-instruct"),
    ("Qwen/QwQ-32B", "qwq"),
    ("Qwen/Qwen2.5-72B-Instruct", "qwen2.5"),
    ("/srv/weights/qwen2_5-7b-instruct", "qwen2.5"),
    ("NousResearch/Hermes-3-Llama-3.1-70B-FP8", "hermes"),
    ("NousResearch/Hermes-2-Pro-Mistral-7B", "hermes"),
    ("meta-llama/Llama-3.3-70B-Instruct", "llama3"),
    ("meta-llama/Meta-Llama-3.1-8B-Instruct", "llama3"),
    ("meta-llama/Llama-4-Scout-17B-16E-Instruct", "llama4"),
    ("mistralai/Mistral-Small-3.2-24B-Instruct-2506", "mistral"),
    ("mistralai/Devstral-Small-2507", "mistral"),
    ("mistralai/Magistral-Small-2509", "magistral"),
    ("mistralai/Ministral-3-8B-Reasoning-2512", "magistral"),
    ("openai/gpt-oss-120b", "gpt-oss"),
    ("moonshotai/Kimi-K2-Instruct-0905", "kimi-k2"),
    ("moonshotai/Kimi-K2-Thinking", "kimi-k2-thinking"),
    ("moonshotai/Kimi-K2.5", "kimi-k2-thinking"),
    ("zai-org/GLM-4.5-Air", "glm-4.5"),
    ("zai-org/GLM-4.6-FP8", "glm-4.5"),
    ("zai-org/GLM-4.7", "glm-4.7"),
]


@pytest.mark.parametrize(("name", "row"), EXAMPLES)
def test_each_name_gets_its_row(name: str, row: str) -> None:
    family = families.detect(name)
    assert family is not None and family.name == row


def test_unknown_models_get_no_row() -> None:
    assert families.detect("google/gemma-3-27b-it", "my-model") is None


def test_the_first_name_that_matches_wins() -> None:
    assert families.detect(None, "", "/models/ckpt", "Qwen/Qwen3-8B", "deepseek-v4").name == "qwen3"  # type: ignore[union-attr]


def test_every_row_is_reachable_by_one_of_its_examples() -> None:
    """Specific-first order: no row is hidden behind an earlier, broader one."""
    assert {row for _, row in EXAMPLES} == set(families.known_names())


def test_checkpoints_detect_their_own_row() -> None:
    for family in FAMILIES:
        for checkpoint in family.checkpoints:
            assert families.detect(checkpoint) == family, checkpoint


def test_rows_have_unique_names_valid_patterns_and_a_source() -> None:
    assert len(set(families.known_names())) == len(FAMILIES)
    for family in FAMILIES:
        re.compile(family.pattern)
        assert family.source, family.name
        assert family.tool_parser


def test_get_by_name() -> None:
    assert families.get("qwen3-coder") is families.detect("Qwen/Qwen3-Coder-Next")
    assert families.get("hermes") is not None
    assert families.get("nope") is None


def test_flags_are_the_registry_flags_in_help_order() -> None:
    v4 = families.get("deepseek-v4")
    assert v4 is not None
    assert v4.flags() == [
        "--tokenizer-mode", "deepseek_v4", "--tool-call-parser", "deepseek_v4", "--reasoning-parser", "deepseek_v4"
    ]  # fmt: skip
    assert families.get("qwen3-coder").flags() == ["--tool-call-parser", "qwen3_coder"]  # type: ignore[union-attr]


def test_a_chat_template_is_never_a_flag() -> None:
    """vLLM's examples/*.jinja are not in its wheel: a path it cannot open stops the server."""
    for family in FAMILIES:
        assert "--chat-template" not in family.flags()
    v31 = families.get("deepseek-v3.1")
    assert v31 is not None and v31.chat_template == "examples/tool_chat_template_deepseekv31.jinja"


def test_the_parsers_the_brief_and_docs_name() -> None:
    expected = {
        "qwen3-coder": ("qwen3_coder", None, None),
        "qwen3": ("hermes", "qwen3", None),
        "qwq": ("hermes", "deepseek_r1", None),
        "qwen2.5": ("hermes", None, None),
        "hermes": ("hermes", None, None),
        "llama3": ("llama3_json", None, None),
        "llama4": ("llama4_pythonic", None, None),
        "mistral": ("mistral", None, None),
        "gpt-oss": ("openai", "openai_gptoss", None),
        "kimi-k2": ("kimi_k2", None, None),
        "glm-4.5": ("glm45", "glm45", None),
        "deepseek-v3.2": ("deepseek_v32", "deepseek_v3", "deepseek_v32"),
        "deepseek-v4": ("deepseek_v4", "deepseek_v4", "deepseek_v4"),
    }
    for name, (tool, reasoning, tokenizer) in expected.items():
        family = families.get(name)
        assert family is not None, name
        assert (family.tool_parser, family.reasoning_parser, family.tokenizer_mode) == (tool, reasoning, tokenizer)


def test_checkpoint_for_a_profile_model_name() -> None:
    v4 = families.get("deepseek-v4")
    assert v4 is not None
    assert v4.checkpoint_for("DeepSeek-V4-Flash") == "deepseek-ai/DeepSeek-V4-Flash"
    assert v4.checkpoint_for("deepseek-v4-pro") == "deepseek-ai/DeepSeek-V4-Pro"
    assert v4.checkpoint_for("ds4") is None
