"""Build a tiny Qwen2-architecture model that vLLM's CPU build can serve, without any model hub:
random weights, a byte-level BPE tokenizer trained on the Python standard library's sources, and a
Qwen/Hermes-style chat template that renders `tools` (so `--tool-call-parser hermes` has its tokens).

Run with the vLLM venv's Python (it has torch, transformers and tokenizers):
    python tests/realservers/tiny_model.py DIR [--window 65536]
The text it generates is gibberish; what the tests need is a real server, a real tokenizer and a
window the agents' prompts fit in.
"""

from __future__ import annotations

import argparse
import json
import sysconfig
from pathlib import Path

VOCAB = 4096
SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
EOS_WEIGHT = 0.95  # P(end of turn) ~0.07 per step at temperature 1: replies of ~14 tokens
TOOL_TOKENS = ["<tool_call>", "</tool_call>"]  # hermes' parser looks these up in the vocabulary
# Characters JSON allows raw inside strings but Python's str.splitlines() splits on: the tests force
# them with logit_bias, so each is one token (as in real tokenizers), learnt from a line of extra text.
LINE_SEPARATORS = {"u2028": "\u2028", "u2029": "\u2029", "u0085": "\u0085"}

CHAT_TEMPLATE = """{%- if tools %}<|im_start|>system
{% if messages[0]['role'] == 'system' %}{{ messages[0]['content'] }}{% else %}You are a helpful assistant.{% endif %}

# Tools

You may call one or more functions. Function signatures are within <tools></tools>:
<tools>{% for tool in tools %}
{{ tool | tojson }}{% endfor %}
</tools>

For each call return a JSON object within <tool_call></tool_call> tags:
<tool_call>
{"name": <function-name>, "arguments": <args-json-object>}
</tool_call><|im_end|>
{% elif messages[0]['role'] == 'system' %}<|im_start|>system
{{ messages[0]['content'] }}<|im_end|>
{% endif %}
{%- for message in messages %}
{%- if message['role'] == 'system' %}{%- if not loop.first or tools %}{%- endif %}
{%- elif message['role'] == 'tool' %}<|im_start|>user
<tool_response>
{{ message['content'] }}
</tool_response><|im_end|>
{% else %}<|im_start|>{{ message['role'] }}
{% if message['content'] is string %}{{ message['content'] }}{% elif message['content'] %}
{%- for part in message['content'] %}{% if part['text'] is defined %}{{ part['text'] }}{% endif %}{% endfor %}
{%- endif %}
{%- if message['tool_calls'] is defined and message['tool_calls'] %}{% for call in message['tool_calls'] %}
{%- set args = call['function']['arguments'] %}
<tool_call>
{"name": "{{ call['function']['name'] }}", "arguments": {{ args if args is string else args | tojson }}}
</tool_call>{% endfor %}{% endif %}<|im_end|>
{% endif %}
{%- endfor %}
{%- if add_generation_prompt %}<|im_start|>assistant
{% endif %}"""


def corpus(out: Path, limit: int = 400) -> list[str]:
    """Local text to train on: the standard library's own sources (always on disk), plus a file where
    each separator is frequent enough to become one token."""
    files = sorted(Path(sysconfig.get_paths()["stdlib"]).glob("*.py"))[:limit]
    extra = out / "separators.txt"
    extra.write_text("".join(f"a{c}b {c}\n" for c in LINE_SEPARATORS.values()) * 500, encoding="utf-8")
    return [str(p) for p in files] + [str(extra)]


def build(out: Path, window: int) -> None:
    import torch
    from tokenizers import ByteLevelBPETokenizer
    from transformers import PreTrainedTokenizerFast, Qwen2Config, Qwen2ForCausalLM

    out.mkdir(parents=True, exist_ok=True)
    bpe = ByteLevelBPETokenizer()
    bpe.train(corpus(out), vocab_size=VOCAB, min_frequency=2, special_tokens=SPECIAL, show_progress=False)
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=bpe._tokenizer,
        bos_token=None,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        additional_special_tokens=["<|im_start|>"],
        model_max_length=window,
        clean_up_tokenization_spaces=False,
    )
    tokenizer.add_tokens(TOOL_TOKENS)  # not special: they must survive detokenisation for the parser
    tokenizer.chat_template = CHAT_TEMPLATE
    tokenizer.save_pretrained(out)
    ids = {name: tokenizer.encode(c) for name, c in LINE_SEPARATORS.items()}
    assert all(len(i) == 1 for i in ids.values()), f"a separator is not one token: {ids}"
    (out / "separator_tokens.json").write_text(json.dumps({name: i[0] for name, i in ids.items()}))

    eos = tokenizer.convert_tokens_to_ids("<|im_end|>")
    config = Qwen2Config(
        vocab_size=len(tokenizer),
        hidden_size=256,
        intermediate_size=512,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=window,
        rope_theta=1_000_000.0,
        tie_word_embeddings=False,
        bos_token_id=eos,
        eos_token_id=eos,
        pad_token_id=tokenizer.pad_token_id,
        torch_dtype="bfloat16",
    )
    torch.manual_seed(0)
    model = Qwen2ForCausalLM(config)
    _stop_soon(model, eos)
    _silence(
        model, [i for i in range(len(tokenizer)) if any(c in tokenizer.decode([i]) for c in LINE_SEPARATORS.values())]
    )
    model = model.to(torch.bfloat16)
    model.save_pretrained(out, safe_serialization=True)
    (out / "generation_config.json").write_text(json.dumps({"eos_token_id": eos, "pad_token_id": config.pad_token_id}))


def _stop_soon(model, eos: int) -> None:
    """Make replies short: random weights would babble until the output limit, and Claude Code
    treats a reply cut at max_tokens as an error. Dimension 0 of the residual stream is held at a
    constant (every embedding has it, no layer writes to it), and only the end-of-turn token reads
    it in the LM head, so at temperature 1 each step ends the turn with probability ~EOS_CHANCE
    while everything else stays gibberish."""
    import torch

    with torch.no_grad():
        model.model.embed_tokens.weight[:, 0] = 1.0
        for layer in model.model.layers:
            layer.self_attn.o_proj.weight[0, :] = 0.0
            layer.mlp.down_proj.weight[0, :] = 0.0
        model.lm_head.weight[:, 0] = 0.0
        model.lm_head.weight[eos, 0] = EOS_WEIGHT


def _silence(model, ids: list[int]) -> None:
    """The separators' tokens never come by chance (only when logit_bias asks for them): random
    weights would otherwise put U+0085 or U+2028 in ~5% of replies, and every healthy-server test
    would then hinge on how each reader treats them. Through the constant dimension 0 (see
    _stop_soon), their logits sit ~30 below the rest; a +100 bias still wins."""
    import torch

    with torch.no_grad():
        for i in ids:
            model.lm_head.weight[i, :] = 0.0
            model.lm_head.weight[i, 0] = -5.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--window", type=int, default=65536)
    args = parser.parse_args()
    build(args.out, args.window)
    print(args.out)


if __name__ == "__main__":
    main()
