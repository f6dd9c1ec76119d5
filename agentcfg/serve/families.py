"""The `vllm serve` flags each model family needs for agents (tools always; reasoning where the model
thinks), with the source of each row. One table: `serve` builds its command from it, doctor compares a
running server's flags with it. Rows are matched in order against a model id or a weights path, so a
more specific family (DeepSeek-V3.2, Qwen3-Coder) comes before the one it would also match (DeepSeek-V3,
Qwen3).

Every parser and tokenizer mode named here is one vLLM's own registries hold (checked against vLLM 0.32:
`ToolParserManager`, `ReasoningParserManager`, `--tokenizer-mode`'s choices; the realservers tier checks
the installed vLLM). Where the model's own chat template (from its checkpoint) does the job, the row sets
none: vLLM's `examples/*.jinja` templates are not in its wheel, so `chat_template` is advice the command
turns into a warning, never a flag (a path vLLM cannot open stops the server).
"""

from __future__ import annotations

import re

from agentcfg.lazyclass import dataclass

RECIPES = "vllm-project/recipes"  # models/<org>/<name>.yaml: recipes.vllm.ai's data (features.tool_calling, ...)
TOOL_DOCS = "docs.vllm.ai features/tool_calling"
REASONING_DOCS = "docs.vllm.ai features/reasoning_outputs"
EXAMPLES_URL = "https://github.com/vllm-project/vllm/blob/main/"  # + examples/<template>.jinja


@dataclass(frozen=True)
class Family:
    """A model family and the vLLM flags its checkpoints need."""

    name: str
    pattern: str  # a regex, searched in the lower-cased model id or weights path
    tool_parser: str
    reasoning_parser: str | None = None
    tokenizer_mode: str | None = None  # None: vLLM's `auto` (which picks DeepSeek's and Mistral's own by checkpoint)
    chat_template: str | None = None  # a template in vLLM's source tree (examples/...), not in its wheel
    thinking: bool = False  # a reasoning model whose tool turns need the reasoning passed back
    min_window: int | None = None  # a mode of the model needs at least this --max-model-len
    min_window_note: str | None = None
    max_window: int | None = None  # the native window every checkpoint of the family has (recipes' context_length)
    checkpoints: tuple[str, ...] = ()  # Hugging Face ids: the weights for a profile whose model is one's name
    trust_remote_code: bool = False  # the checkpoint needs its own Python code (--trust-remote-code)
    source: str = ""

    def flags(self) -> list[str]:
        """The family's own flags, in the order `vllm serve --help` lists them. The chat template is not one:
        see the module's docstring."""
        out = []
        if self.tokenizer_mode:
            out += ["--tokenizer-mode", self.tokenizer_mode]
        out += ["--tool-call-parser", self.tool_parser]
        if self.reasoning_parser:
            out += ["--reasoning-parser", self.reasoning_parser]
        return out

    def checkpoint_for(self, model: str) -> str | None:
        """The family's checkpoint whose name is `model` (a profile's model name), case aside."""
        wanted = model.lower()
        return next((c for c in self.checkpoints if c.split("/")[-1].lower() == wanted), None)


FAMILIES: tuple[Family, ...] = (
    Family(
        "deepseek-v4.1",
        r"deepseek[-_. ]?v4[._]1",
        "deepseek_v41",
        "deepseek_v41",
        thinking=True,
        source="vLLM 0.32's registries (tool and reasoning parser deepseek_v41; its tokenizer mode is chosen by "
        "the architecture, DeepseekV41ForCausalLM, and is not a --tokenizer-mode choice); no recipe yet",
    ),
    Family(
        "deepseek-v4",
        r"deepseek[-_. ]?v4",
        "deepseek_v4",
        "deepseek_v4",
        "deepseek_v4",
        thinking=True,
        min_window=393_216,
        min_window_note="DeepSeek-V4's Think Max mode needs a window of at least 393,216 tokens",
        max_window=1_048_576,
        checkpoints=("deepseek-ai/DeepSeek-V4-Flash", "deepseek-ai/DeepSeek-V4-Pro"),
        source=f"recipes.vllm.ai/deepseek-ai/DeepSeek-V4-Flash (tool calling, reasoning); {RECIPES} "
        "models/deepseek-ai/DeepSeek-V4-Flash.yaml and -Pro.yaml",
    ),
    Family(
        "deepseek-v3.2",
        r"deepseek[-_. ]?v3[._]2",
        "deepseek_v32",
        "deepseek_v3",
        "deepseek_v32",
        thinking=True,
        max_window=163_840,
        checkpoints=("deepseek-ai/DeepSeek-V3.2", "deepseek-ai/DeepSeek-V3.2-Exp"),
        source=f"{RECIPES} DeepSeek/DeepSeek-V3_2.md and models/deepseek-ai/DeepSeek-V3.2.yaml; vllm PR #29837",
    ),
    Family(
        "deepseek-v3.1",
        r"deepseek[-_. ]?v3[._]1",
        "deepseek_v31",
        "deepseek_v3",
        chat_template="examples/tool_chat_template_deepseekv31.jinja",
        thinking=True,
        max_window=163_840,
        checkpoints=("deepseek-ai/DeepSeek-V3.1",),
        source=f"{RECIPES} DeepSeek/DeepSeek-V3_1.md and models/deepseek-ai/DeepSeek-V3.1.yaml; "
        "tool parser vllm PR #23454",
    ),
    Family(
        "deepseek-r1-distill",
        r"deepseek[-_. ]?r1[-_. ]distill",
        "hermes",
        "deepseek_r1",
        thinking=True,
        source=f"{REASONING_DOCS} (deepseek_r1); distills carry their base model's tool format [infer]",
    ),
    Family(
        "deepseek-r1",
        r"deepseek[-_. ]?r1",
        "deepseek_v3",
        "deepseek_r1",
        chat_template="examples/tool_chat_template_deepseekr1.jinja",
        thinking=True,
        max_window=163_840,
        checkpoints=("deepseek-ai/DeepSeek-R1", "deepseek-ai/DeepSeek-R1-0528"),
        source=f"{TOOL_DOCS} (deepseek_v3, DeepSeek-R1-0528 with its template); {REASONING_DOCS} (deepseek_r1); "
        f"{RECIPES} models/deepseek-ai/DeepSeek-R1.yaml",
    ),
    Family(
        "deepseek-v3",
        r"deepseek[-_. ]?v3",
        "deepseek_v3",
        chat_template="examples/tool_chat_template_deepseekv3.jinja",
        max_window=163_840,
        checkpoints=("deepseek-ai/DeepSeek-V3", "deepseek-ai/DeepSeek-V3-0324"),
        source=f"{TOOL_DOCS}: DeepSeek-V3 (deepseek_v3, V3-0324 with its template); {RECIPES} "
        "models/deepseek-ai/DeepSeek-V3.yaml",
    ),
    Family(
        "kimi-k2-thinking",
        r"kimi[-_. ]?k2(?:[-_. ]?thinking|\.\d)",
        "kimi_k2",
        "kimi_k2",
        thinking=True,
        max_window=262_144,
        checkpoints=("moonshotai/Kimi-K2-Thinking", "moonshotai/Kimi-K2.5", "moonshotai/Kimi-K2.6"),
        trust_remote_code=True,
        source=f"{RECIPES} models/moonshotai/Kimi-K2-Thinking.yaml, Kimi-K2.5.yaml, Kimi-K2.6.yaml",
    ),
    Family(
        "kimi-k2",
        r"kimi[-_. ]?k2",
        "kimi_k2",
        checkpoints=("moonshotai/Kimi-K2-Instruct", "moonshotai/Kimi-K2-Instruct-0905"),
        trust_remote_code=True,
        source=f"{TOOL_DOCS}: Kimi-K2 (kimi_k2); {RECIPES} models/moonshotai/Kimi-K2-Instruct.yaml",
    ),
    Family(
        "glm-4.7",
        r"glm[-_. ]?4\.7",
        "glm47",
        "glm45",
        thinking=True,
        max_window=202_752,
        checkpoints=("zai-org/GLM-4.7",),
        source=f"{TOOL_DOCS}: GLM-4.7 (glm47); {RECIPES} models/zai-org/GLM-4.7.yaml (reasoning glm45)",
    ),
    Family(
        "glm-4.5",
        r"glm[-_. ]?4\.[56]",
        "glm45",
        "glm45",
        thinking=True,
        checkpoints=("zai-org/GLM-4.5", "zai-org/GLM-4.5-Air", "zai-org/GLM-4.6"),
        source=f"{TOOL_DOCS}: GLM-4.5 (glm45, also GLM-4.6); {REASONING_DOCS} (glm45); {RECIPES} "
        "models/zai-org/GLM-4.5.yaml and GLM-4.6.yaml",
    ),
    Family(
        "gpt-oss",
        r"gpt[-_. ]?oss",
        "openai",
        "openai_gptoss",
        thinking=True,
        max_window=131_072,
        checkpoints=("openai/gpt-oss-20b", "openai/gpt-oss-120b"),
        source=f"{TOOL_DOCS}: OpenAI OSS (openai); {RECIPES} OpenAI/GPT-OSS.md and models/openai/gpt-oss-20b.yaml; "
        "openai_gptoss is the reasoning parser vLLM sets itself for gpt-oss (model_executor/models/config.py)",
    ),
    Family(
        "hermes",
        r"hermes[-_. ]?[23]",
        "hermes",
        source=f"{TOOL_DOCS}: Hermes (hermes; Hermes-2-Pro, Hermes-2-Theta, Hermes-3)",
    ),
    Family(
        "qwen3-coder",
        r"qwen3[-_. ]?coder",
        "qwen3_coder",
        max_window=262_144,
        checkpoints=(
            "Qwen/Qwen3-Coder-30B-A3B-Instruct",
            "Qwen/Qwen3-Coder-480B-A35B-Instruct",
            "Qwen/Qwen3-Coder-Next",
        ),
        source=f"{RECIPES} Qwen/Qwen3-Coder-480B-A35B.md and models/Qwen/Qwen3-Coder-480B-A35B-Instruct.yaml "
        "(qwen3_coder; qwen3_xml is the same parser)",
    ),
    Family(
        "qwen3.5",
        r"qwen3\.[5-9]",
        "qwen3_coder",
        "qwen3",
        thinking=True,
        max_window=262_144,
        checkpoints=("Qwen/Qwen3.5-397B-A17B", "Qwen/Qwen3.5-27B", "Qwen/Qwen3.6-27B", "Qwen/Qwen3.6-35B-A3B"),
        source=f"{RECIPES} Qwen/Qwen3.5.md, Qwen/Qwen3.6.md and models/Qwen/Qwen3.5-*.yaml (qwen3_coder, qwen3)",
    ),
    Family(
        "qwq",
        r"qwq",
        "hermes",
        "deepseek_r1",
        thinking=True,
        checkpoints=("Qwen/QwQ-32B",),
        source=f"{TOOL_DOCS}: Qwen (hermes, QwQ-32B); {REASONING_DOCS} (QwQ-32B: deepseek_r1)",
    ),
    Family(
        "qwen3-instruct",
        r"qwen3.*instruct",
        "hermes",
        checkpoints=("Qwen/Qwen3-235B-A22B-Instruct-2507", "Qwen/Qwen3-Next-80B-A3B-Instruct"),
        source=f"{RECIPES} models/Qwen/Qwen3-235B-A22B-Instruct-2507.yaml and Qwen3-Next-80B-A3B-Instruct.yaml "
        "(hermes; the non-thinking releases, no reasoning parser)",
    ),
    Family(
        "qwen3",
        r"qwen3",
        "hermes",
        "qwen3",
        thinking=True,
        checkpoints=("Qwen/Qwen3-8B", "Qwen/Qwen3-32B", "Qwen/Qwen3-30B-A3B"),
        source=f"{RECIPES} models/Qwen/Qwen3-32B.yaml (hermes, qwen3); {REASONING_DOCS} (Qwen3 series: qwen3)",
    ),
    Family(
        "qwen2.5",
        r"qwen2[._]5",
        "hermes",
        source=f"{TOOL_DOCS}: Qwen (hermes; Qwen2.5's own chat template has Hermes-style tool use)",
    ),
    Family(
        "llama4",
        r"llama[-_. ]?4",
        "llama4_pythonic",
        chat_template="examples/tool_chat_template_llama4_pythonic.jinja",
        checkpoints=("meta-llama/Llama-4-Scout-17B-16E-Instruct", "meta-llama/Llama-4-Maverick-17B-128E-Instruct"),
        source=f"{TOOL_DOCS}: Llama (Llama 4: llama4_pythonic with its template)",
    ),
    Family(
        "llama3",
        r"llama[-_. ]?3",
        "llama3_json",
        chat_template="examples/tool_chat_template_llama3.1_json.jinja",
        max_window=131_072,
        checkpoints=("meta-llama/Llama-3.1-8B-Instruct", "meta-llama/Llama-3.3-70B-Instruct"),
        source=f"{TOOL_DOCS}: Llama (llama3_json, Llama 3.1/3.2 with tool_chat_template_llama3.1_json.jinja)",
    ),
    Family(
        "magistral",
        r"magistral|m(?:in)?istral.*reasoning",
        "mistral",
        "mistral",
        thinking=True,
        source=f"{RECIPES} models/mistralai/Ministral-3-8B-Reasoning-2512.yaml (mistral, mistral); "
        "Mistral's own tokenizer format is vLLM's `auto` choice when the checkpoint has it",
    ),
    Family(
        "mistral",
        r"mistral|ministral|devstral|codestral",
        "mistral",
        source=f"{TOOL_DOCS}: Mistral (mistral); {RECIPES} models/mistralai/Mistral-Large-3-675B-Instruct-2512.yaml",
    ),
)


def known_names() -> list[str]:
    """Every row's name, in the table's order (`--family` takes one, or `none`)."""
    return [f.name for f in FAMILIES]


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
