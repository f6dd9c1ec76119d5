"""agentcfg.serve.command: the `vllm serve` command and environment from a profile (pure: plain Profiles and dicts)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentcfg.errors import AgentcfgError, Exit
from agentcfg.profiles import Profile
from agentcfg.serve import command
from agentcfg.serve.command import Options

LOCAL = Profile(name="local", base_url="http://localhost:8000/v1", model="DeepSeek-V4-Flash", context_window=1_048_576)
KEYED = Profile(name="box", base_url="http://127.0.0.1:8123/v1", model="Qwen/Qwen3-8B", key_env="BOX_KEY")
ENV = {"PATH": "/usr/bin", "HOME": "/home/u", "PYTHONPATH": "/home/u/lib", "PYTHONHOME": "/opt/py",
       "OPENAI_API_KEY": "sk-openai-123456", "ANTHROPIC_AUTH_TOKEN": "sk-ant-123456", "HF_TOKEN": "hf_abcdef",
       "BOX_KEY": "sk-box-123456", "VLLM_API_KEY": "inherited-key-1"}  # fmt: skip


def build(profile: Profile = LOCAL, gpu_count: int = 1, key: str | None = None, **options: object) -> command.Command:
    return command.build(profile, Options(**options), ENV, gpu_count=gpu_count, key=key)  # type: ignore[arg-type]


def flag(cmd: command.Command, name: str) -> str | None:
    argv = list(cmd.argv)
    return argv[argv.index(name) + 1] if name in argv else None


def test_the_local_profile_serves_deepseek_v4_flash() -> None:
    cmd = build()
    assert cmd.argv[:3] == ("vllm", "serve", "deepseek-ai/DeepSeek-V4-Flash")
    assert flag(cmd, "--served-model-name") == "DeepSeek-V4-Flash"
    assert flag(cmd, "--max-model-len") == "1048576"
    assert flag(cmd, "--tokenizer-mode") == flag(cmd, "--tool-call-parser") == flag(cmd, "--reasoning-parser")
    assert flag(cmd, "--tool-call-parser") == "deepseek_v4"
    assert "--enable-auto-tool-choice" in cmd.argv
    assert "--enforce-eager" not in cmd.argv
    assert "--tensor-parallel-size" not in cmd.argv
    assert (flag(cmd, "--host"), flag(cmd, "--port")) == ("127.0.0.1", "8000")
    assert (cmd.host, cmd.port) == ("127.0.0.1", 8000)
    assert cmd.family is not None and cmd.family.name == "deepseek-v4"


def test_weights_and_program_as_given() -> None:
    cmd = build(weights="/models/DeepSeek-V4-Flash-FP8", vllm="/opt/venvs/v4/bin/vllm")
    assert cmd.argv[:3] == ("/opt/venvs/v4/bin/vllm", "serve", "/models/DeepSeek-V4-Flash-FP8")


def test_a_profile_model_that_is_a_hub_id_is_the_weights() -> None:
    assert build(KEYED, key="k" * 20).argv[2] == "Qwen/Qwen3-8B"


def test_no_weights_known_is_an_error() -> None:
    profile = Profile(name="p", base_url="http://127.0.0.1:8000/v1", model="ds4")
    with pytest.raises(AgentcfgError, match="weights") as caught:
        build(profile, family="deepseek-v4")
    assert "--weights" in (caught.value.hint or "")
    assert "deepseek-ai/DeepSeek-V4-Flash" in (caught.value.hint or "")


def test_the_window_is_left_out_when_the_profile_has_none() -> None:
    assert "--max-model-len" not in build(KEYED, key="k" * 20).argv


def test_family_from_weights_before_the_profile_model() -> None:
    profile = Profile(name="p", base_url="http://127.0.0.1:8000/v1", model="coder")
    cmd = build(profile, weights="Qwen/Qwen3-Coder-30B-A3B-Instruct")
    assert cmd.family is not None and cmd.family.name == "qwen3-coder"
    assert flag(cmd, "--tool-call-parser") == "qwen3_coder"
    assert "--reasoning-parser" not in cmd.argv


def test_an_explicit_family_wins() -> None:
    cmd = build(weights="/models/finetune", family="hermes")
    assert cmd.family is not None and cmd.family.name == "hermes"
    assert flag(cmd, "--tool-call-parser") == "hermes"
    assert "--tokenizer-mode" not in cmd.argv


def test_an_unknown_family_lists_the_names() -> None:
    with pytest.raises(AgentcfgError, match="unknown family") as caught:
        build(family="deepsek")
    assert caught.value.exit_code == Exit.REFUSED
    assert "qwen3-coder" in (caught.value.hint or "") and "none" in (caught.value.hint or "")


def test_no_family_and_no_parser_is_an_error_with_both_ways_out() -> None:
    profile = Profile(name="p", base_url="http://127.0.0.1:8000/v1", model="my-model")
    with pytest.raises(AgentcfgError, match="family") as caught:
        build(profile, weights="/models/ckpt")
    assert "--family" in (caught.value.hint or "") and "-- --tool-call-parser" in (caught.value.hint or "")


def test_family_none_takes_the_parser_from_extra() -> None:
    profile = Profile(name="p", base_url="http://127.0.0.1:8000/v1", model="my-model")
    cmd = build(profile, weights="/models/ckpt", family="none", extra=("--tool-call-parser", "pythonic"))
    assert cmd.family is None
    assert flag(cmd, "--tool-call-parser") == "pythonic"
    with pytest.raises(AgentcfgError):
        build(profile, weights="/models/ckpt", family="none")


def test_extra_overrides_agentcfg_flags_of_the_same_name() -> None:
    cmd = build(extra=("--max-model-len", "65536", "--tool_call_parser=deepseek_v32", "--kv-cache-dtype", "fp8"))
    assert cmd.argv.count("--max-model-len") == 1 and flag(cmd, "--max-model-len") == "65536"
    assert "--tool-call-parser" not in cmd.argv and "--tool_call_parser=deepseek_v32" in cmd.argv
    assert cmd.argv[-2:] == ("--kv-cache-dtype", "fp8")


def test_extra_host_and_port_are_the_commands() -> None:
    cmd = build(extra=("--port=9001", "--host", "::1"))
    assert (cmd.host, cmd.port) == ("::1", 9001)
    assert cmd.argv.count("--port") == 0 and "--port=9001" in cmd.argv


def test_api_key_in_extra_is_refused() -> None:
    for extra in (("--api-key", "sk-abc"), ("--api-key=sk-abc",), ("--api_key", "x")):
        with pytest.raises(AgentcfgError, match="--api-key") as caught:
            build(extra=extra)
        assert "VLLM_API_KEY" in str(caught.value) + (caught.value.hint or "")


def test_the_key_only_in_the_environment() -> None:
    cmd = build(KEYED, key="sk-secret-value-1")
    assert "sk-secret-value-1" not in " ".join(cmd.argv)
    assert cmd.env["VLLM_API_KEY"] == "sk-secret-value-1"


def test_no_key_removes_an_inherited_one() -> None:
    assert "VLLM_API_KEY" not in build().env


def test_a_profile_that_needs_a_key_without_one_is_refused() -> None:
    with pytest.raises(AgentcfgError, match="key") as caught:
        build(KEYED)
    assert caught.value.exit_code == Exit.NO_KEY


def test_the_environment_the_field_reports_needed() -> None:
    env = build(KEYED, key="k" * 20).env
    assert "PYTHONPATH" not in env and "PYTHONHOME" not in env
    assert env["PYTHONNOUSERSITE"] == "1"
    assert env["VLLM_NO_USAGE_STATS"] == "1"
    assert env["PATH"] == "/usr/bin" and env["HF_TOKEN"] == "hf_abcdef"
    assert "OPENAI_API_KEY" not in env and "ANTHROPIC_AUTH_TOKEN" not in env and "BOX_KEY" not in env
    assert "CUDA_VISIBLE_DEVICES" not in env


def test_usage_stats_left_as_the_user_set_them() -> None:
    cmd = command.build(LOCAL, Options(), {"VLLM_NO_USAGE_STATS": "0"}, gpu_count=1, key=None)
    assert cmd.env["VLLM_NO_USAGE_STATS"] == "0"


def test_gpus_set_the_devices_and_the_tensor_parallelism() -> None:
    cmd = build(gpus=("2", "3"), gpu_count=8)
    assert cmd.env["CUDA_VISIBLE_DEVICES"] == "2,3"
    assert flag(cmd, "--tensor-parallel-size") == "2"
    assert flag(build(gpu_count=4), "--tensor-parallel-size") == "4"
    assert "--tensor-parallel-size" not in build(gpus=("0",), gpu_count=8).argv


def test_a_parallel_layout_in_extra_replaces_agentcfgs() -> None:
    for extra in (("-dp", "4"), ("--data-parallel-size", "4"), ("-tp", "2"), ("--pipeline-parallel-size=2",)):
        cmd = build(gpu_count=4, extra=extra)
        assert "--tensor-parallel-size" not in cmd.argv, extra


def test_enforce_eager_only_when_asked_and_then_with_its_cost() -> None:
    assert not any("eager" in w for w in build().warnings)
    cmd = build(enforce_eager=True)
    assert "--enforce-eager" in cmd.argv
    (warning,) = [w for w in cmd.warnings if "eager" in w]
    assert "67" in warning and "5 tok/s" in warning and "13" in warning
    assert any("eager" in w for w in build(extra=("--enforce-eager",)).warnings)


def test_a_host_off_this_machine_is_warned_about() -> None:
    cmd = build(host="0.0.0.0")
    assert flag(cmd, "--host") == "0.0.0.0"
    assert any("0.0.0.0" in w for w in cmd.warnings)


def test_the_profile_must_be_this_machines_server() -> None:
    remote = Profile(name="r", base_url="https://api.deepseek.com/v1", model="deepseek-chat")
    with pytest.raises(AgentcfgError, match="not this machine"):
        build(remote, family="deepseek-v3")


def test_a_route_profile_is_refused() -> None:
    from agentcfg.route.spec import Route

    route = Route("local", ("gw",))
    routed = Profile(name="rt", base_url="http://127.0.0.1:4000/v1", model="DeepSeek-V4-Flash", route=route)
    with pytest.raises(AgentcfgError, match="route"):
        build(routed)


def test_window_warnings() -> None:
    small = Profile(name="s", base_url="http://127.0.0.1:8000/v1", model="DeepSeek-V4-Flash", context_window=65_536)
    assert any("393,216" in w for w in build(small).warnings)
    assert not any("393,216" in w for w in build().warnings)
    big = Profile(name="b", base_url="http://127.0.0.1:8000/v1", model="openai/gpt-oss-20b", context_window=262_144)
    (warning,) = [w for w in build(big).warnings if "131,072" in w]
    assert "VLLM_ALLOW_LONG_MAX_MODEL_LEN" in warning


def test_a_chat_template_the_wheel_lacks_is_a_warning_naming_the_flag() -> None:
    profile = Profile(name="p", base_url="http://127.0.0.1:8000/v1", model="deepseek-ai/DeepSeek-V3.1")
    cmd = build(profile)
    assert "--chat-template" not in cmd.argv
    (warning,) = [w for w in cmd.warnings if "chat template" in w]
    assert "tool_chat_template_deepseekv31.jinja" in warning and "-- --chat-template" in warning
    given = build(profile, extra=("--chat-template", "/t/v31.jinja"))
    assert not any("chat template" in w for w in given.warnings)


def test_served_name_override_is_warned_about() -> None:
    cmd = build(extra=("--served-model-name", "other"))
    assert any("DeepSeek-V4-Flash" in w and "other" in w for w in cmd.warnings)


def test_render_shows_the_env_changes_and_argv_with_the_key_masked() -> None:
    cmd = build(KEYED, key="sk-secret-value-1", gpus=("0",))
    text = command.render(cmd, ENV)
    assert "sk-secret-value-1" not in text
    assert "VLLM_API_KEY=****" in text
    assert "-u PYTHONPATH" in text and "-u OPENAI_API_KEY" in text
    assert "CUDA_VISIBLE_DEVICES=0" in text and "PYTHONNOUSERSITE=1" in text
    assert "HOME=" not in text  # unchanged variables are not repeated
    assert "vllm serve Qwen/Qwen3-8B" in text


def test_render_quotes_for_the_shell() -> None:
    cmd = build(weights="/models/my model", extra=("--speculative-config", '{"method":"mtp"}'))
    text = command.render(cmd, ENV)
    assert "'/models/my model'" in text and """'{"method":"mtp"}'""" in text


def test_shown_for_json() -> None:
    cmd = build(KEYED, key="sk-secret-value-1")
    data = command.shown(cmd, ENV)
    assert data["argv"] == list(cmd.argv)
    assert data["env"]["set"]["VLLM_API_KEY"] == "****"
    assert "PYTHONPATH" in data["env"]["unset"]
    assert data["family"] == "qwen3" and data["host"] == "127.0.0.1" and data["port"] == 8123
    assert isinstance(data["warnings"], list)
    assert "sk-secret-value-1" not in repr(data)


def test_resolve_vllm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    program = venv / "bin" / "vllm"
    program.write_text("#!/bin/sh\n")
    program.chmod(0o755)
    python = venv / "bin" / "python3.12"
    python.write_text("")
    python.chmod(0o755)
    assert command.resolve_vllm(str(venv), {}) == str(program)
    assert command.resolve_vllm(str(python), {}) == str(program)
    assert command.resolve_vllm(str(program), {}) == str(program)
    assert command.resolve_vllm(None, {"PATH": str(venv / "bin")}) == str(program)
    with pytest.raises(AgentcfgError) as caught:
        command.resolve_vllm(None, {"PATH": str(tmp_path)})
    assert "--vllm" in (caught.value.hint or "")
    with pytest.raises(AgentcfgError):
        command.resolve_vllm(str(tmp_path / "nothing"), {})
    monkeypatch.chdir(tmp_path)
    assert command.resolve_vllm("venv", {}) == str(program)  # made absolute: the server may start elsewhere
    program.chmod(0o644)
    with pytest.raises(AgentcfgError):
        command.resolve_vllm(str(program), {})
