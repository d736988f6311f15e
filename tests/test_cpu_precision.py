"""The CPU precision: detected from the processor (capabilities mocked here), chosen by the user,
carried into the engine, shown where the device is shown, and measured on this computer."""

from __future__ import annotations

import json

import pytest
import torch

from app import cpu_precision
from app.cpu_precision import decide, device_line, for_device, native_bf16
from app.engine.cpu_measure import MeasureCancelled, PathTiming, measure, recommend
from app.errors import VoxDeskError

AVX2 = {"architecture": "x86_64", "avx2": True, "avx512_f": False, "avx512_bf16": False, "amx_tile": False}
AVX512 = {**AVX2, "avx512_f": True, "avx512_vnni": True}  # Skylake-class: bf16 would be emulated
AVX512_BF16 = {**AVX512, "avx512_bf16": True}  # Zen 4/5, Cooper Lake
AMX = {**AVX512_BF16, "amx_tile": True, "amx_bf16": True}  # Sapphire Rapids and later
ARM = {"architecture": "arm64", "neon": True, "bf16": True}


@pytest.mark.parametrize(
    "caps, dtype, line",
    [
        (AVX2, "float32", "fp32: no native bf16 on this CPU"),
        (AVX512, "float32", "fp32: no native bf16 on this CPU"),
        (AVX512_BF16, "bfloat16", "bf16: this CPU has AVX512-BF16"),
        (AMX, "bfloat16", "bf16: this CPU has AMX"),
        (ARM, "float32", "fp32: no native bf16 on this CPU"),
        ({}, "float32", "fp32: no native bf16 on this CPU"),
    ],
    ids=["avx2", "avx512", "avx512-bf16", "amx", "arm", "unknown"],
)
def test_automatic_choice_follows_native_bf16(caps, dtype, line):
    p = decide("auto", caps)
    assert (p.dtype, p.int8, p.chosen, p.describe()) == (dtype, False, False, line)
    assert decide(None, caps) == p


@pytest.mark.parametrize("choice, name", [("float32", "fp32"), ("bfloat16", "bf16"), ("int8", "int8")])
def test_a_named_choice_wins_over_the_processor(choice, name):
    for caps in (AVX2, AMX):
        p = decide(choice, caps)
        assert (p.name, p.chosen) == (name, True)
        assert p.describe() == f"{name}: chosen by the user"
    assert decide("int8", AMX).dtype == "float32"  # int8 weights are made from the fp32 model


def test_unknown_choice_is_one_clear_message():
    with pytest.raises(VoxDeskError, match="Unknown CPU precision 'fp8': use auto, float32, bfloat16, int8"):
        decide("fp8")


def test_for_device_and_device_line():
    assert for_device("cuda", "int8") is None and for_device("cuda:1") is None  # a GPU keeps its dtype
    assert for_device("cpu", "auto", caps=AMX).dtype == "bfloat16"
    forced = for_device("cpu", "auto", "float32", caps=AMX)  # bench --dtype, tests
    assert (forced.dtype, forced.chosen, forced.describe()) == ("float32", True, "fp32: chosen by the user")
    assert for_device("cpu", "auto", "bf16", caps=AVX2).name == "bf16"  # an alias load_model takes
    assert device_line("cpu", decide("auto", AMX)) == "cpu · bf16: this CPU has AMX"
    assert device_line("cuda:0", None) == "cuda:0"


def test_capabilities_are_read_the_way_torch_dispatch_sees_them(monkeypatch):
    """torch >= 2.10 has ``torch.cpu.get_capabilities``; older torch (2.11 on the GPU image has
    both) only the ``_is_*_supported`` helpers: either way the same two flags decide."""
    read = cpu_precision.cpu_capabilities.__wrapped__
    caps = read()
    assert native_bf16(caps) == (
        "AMX" if caps.get("amx_tile") or caps.get("amx_bf16") else
        "AVX512-BF16" if caps.get("avx512_bf16") else None
    )  # fmt: skip
    monkeypatch.delattr(torch.cpu, "get_capabilities", raising=False)
    monkeypatch.setattr(torch.cpu, "_is_avx512_bf16_supported", lambda: True, raising=False)
    monkeypatch.setattr(torch.cpu, "_is_amx_tile_supported", lambda: False, raising=False)
    assert native_bf16(read()) == "AVX512-BF16"


def test_no_native_bf16_variable_decides_as_without_it(monkeypatch):
    """VOXDESK_NO_NATIVE_BF16=1: the automatic choice is fp32 whatever the processor has (the
    suite sets it); capabilities given explicitly still decide."""
    monkeypatch.setattr(cpu_precision, "cpu_capabilities", lambda: AMX)
    monkeypatch.setenv(cpu_precision.NO_NATIVE_BF16, "1")
    assert native_bf16() is None and decide().describe() == "fp32: no native bf16 on this CPU"
    assert decide("auto", AMX).dtype == "bfloat16"
    monkeypatch.setenv(cpu_precision.NO_NATIVE_BF16, "0")
    assert native_bf16() == "AMX" and decide().dtype == "bfloat16"


def test_engine_loads_the_precision_the_processor_gets(tiny_v2, monkeypatch):
    """With AMX reported, the default engine runs bf16; fp32 named, fp32; and the precision and
    its reason ride on the engine for the status bar, /health and the self-test."""
    from app.engine import Engine, EngineConfig

    monkeypatch.delenv(cpu_precision.NO_NATIVE_BF16)  # the processor decides (tests/conftest.py sets it)
    monkeypatch.setattr(cpu_precision, "cpu_capabilities", lambda: AMX)
    engine = Engine(EngineConfig(str(tiny_v2), device="cpu", max_num_seqs=1, max_model_len=64))
    assert engine.runner.model.base_lm.embed_tokens.weight.dtype == torch.bfloat16
    assert engine.precision.describe() == "bf16: this CPU has AMX" and not engine.cpu_int8
    engine.shutdown()
    monkeypatch.setattr(cpu_precision, "cpu_capabilities", lambda: AVX2)
    engine = Engine(EngineConfig(str(tiny_v2), device="cpu", max_num_seqs=1, max_model_len=64))
    assert engine.runner.model.base_lm.embed_tokens.weight.dtype == torch.float32
    assert engine.precision.describe() == "fp32: no native bf16 on this CPU"
    engine.shutdown()
    with pytest.raises(ValueError, match="cpu_precision must be one of auto, float32, bfloat16, int8"):
        EngineConfig(str(tiny_v2), cpu_precision="int4")


def test_cli_dtype_reaches_the_model_and_info_names_the_choice(tiny_v2, tmp_path, capsys, monkeypatch):
    from app.cli import main

    monkeypatch.delenv(cpu_precision.NO_NATIVE_BF16)
    monkeypatch.setattr(cpu_precision, "cpu_capabilities", lambda: AVX512_BF16)
    assert main(["info", "--model", str(tiny_v2)]) == 0
    out = capsys.readouterr().out
    assert "cpu precision: bf16: this CPU has AVX512-BF16 (synth and serve --dtype choose another)" in out
    wav = tmp_path / "a.wav"
    args = ["synth", "--model", str(tiny_v2), "--text", "Hi.", "--seed", "1", "--device", "cpu"]
    assert main([*args, "--max-len", "3", "--dtype", "bfloat16", "--out", str(wav)]) == 0
    assert wav.stat().st_size > 44
    with pytest.raises(SystemExit):
        main([*args, "--dtype", "fp8", "--out", str(wav)])
    assert "invalid choice: 'fp8'" in capsys.readouterr().err


def test_health_shows_the_device_line(tiny_v2, tmp_path):
    from starlette.testclient import TestClient

    from app.engine import Engine, EngineConfig
    from app.engine.host import EngineHost
    from app.server.app import ServerConfig, ServerState, build_app
    from app.server.cli import served_model
    from app.voices.library import VoiceLibrary

    engine = Engine(EngineConfig(str(tiny_v2), device="cpu", cpu_precision="int8", max_num_seqs=2))
    host = EngineHost(engine).start()
    try:
        state = ServerState(ServerConfig(), VoiceLibrary(tmp_path / "voices"))
        state.attach(host, served_model(engine, str(tiny_v2)))
        with TestClient(build_app(state)) as client:
            body = json.loads(client.get("/health").text)
        assert body["engine"]["device"] == "cpu · int8: chosen by the user"
    finally:
        host.close()


def test_recommendation_rule():
    def t(choice, ms):
        return PathTiming(choice, ms, None)

    # the automatic choice is the fastest faithful path and int8 gains less than 2x: keep automatic
    assert recommend((t("float32", 100), t("int8", 60)), "float32") == "auto"
    # int8 at least halves the step: recommend it
    assert recommend((t("float32", 100), t("bfloat16", 70), t("int8", 35)), "bfloat16") == "int8"
    # bf16 native but measured slower than fp32 on this model: name fp32
    assert recommend((t("float32", 100), t("bfloat16", 120), t("int8", 80)), "bfloat16") == "float32"


def test_measure_times_each_path_on_the_model_and_can_be_stopped(tiny_v2, capsys):
    """Real engines on the tiny model; with AMX reported the three paths are timed, int8's cost
    (its first patches against fp32's, same seed) is measured, and a cancel stops between steps.
    ``bench --measure-cpu`` prints the same from the command line."""
    seen: list[tuple[float, str]] = []
    m = measure(str(tiny_v2), patches=2, threads=1, progress=lambda f, s: seen.append((f, s)), caps=AMX)
    assert [t.choice for t in m.timings] == ["float32", "bfloat16", "int8"]
    assert all(t.ms_per_patch > 0 for t in m.timings) and m.automatic == "bfloat16"
    assert m.timing("int8").deviation is not None and 0 < m.timing("int8").deviation < 0.5
    assert m.timing("float32").deviation is None and m.recommended in ("auto", "float32", "int8")
    assert [s for _, s in seen] == ["float32", "bfloat16", "int8", ""] and seen[-1][0] == 1.0
    assert "recommended:" in m.summary() and "ms per patch" in m.summary()
    assert [t.choice for t in measure(str(tiny_v2), patches=1, threads=1, caps=AVX2).timings] == [
        "float32", "int8",
    ]  # fmt: skip
    from app.cli import main

    assert main(["bench", "--model", str(tiny_v2), "--measure-cpu", "--threads", "1"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("fp32: ") and out[-1].startswith("recommended: ") and len(out) >= 3
    with pytest.raises(MeasureCancelled):
        measure(str(tiny_v2), patches=2, threads=1, cancelled=lambda: True, caps=AVX2)
