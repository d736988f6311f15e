"""CosyVoice's HiFT vocoder against the official goldens (tests/data/cosyvoice/README.md).

From each golden's ``mel_k`` (the mel the official ``hift.inference`` got), VoxDesk's vocoder
gives the golden's audio. CosyVoice2 draws its noise per call from the generator whose state
``<family>_<mode>_rng.npz`` recorded right before that call; CosyVoice3 uses the tables the
official loader drew at construction, which :class:`SourceTables` replays.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest
import torch

from app.errors import VoxDeskError
from app.models.cosyvoice.checkpoint import write_checkpoint
from app.models.cosyvoice.config import load_config
from app.models.cosyvoice.hift import HiFT
from app.models.cosyvoice.hift_source import SourceTables

DATA = Path(__file__).parent / "data" / "cosyvoice"
FAMILIES = ("cosyvoice2", "cosyvoice3")
WHOLE = ("zero_shot", "cross_lingual", "instruct2", "speed")
OVERLAP = 8 * 480  # CosyVoice2's streaming: the source cache and the cross-fade, in samples
TOL = 1e-3


pytestmark = pytest.mark.usefixtures("golden_threads")  # as the goldens were made


@pytest.fixture(scope="module")
def folders(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("cosyvoice-hift")
    return {f: write_checkpoint(root / f, f"{f}-tiny") for f in FAMILIES}


def _hift(folder: Path, family: str, state: dict[str, torch.Tensor] | None = None) -> HiFT:
    model = HiFT.from_config(load_config(folder / f"{family}.yaml"))
    return model.load(state if state is not None else torch.load(folder / "hift.pt", weights_only=True))


@pytest.fixture(scope="module")
def vocoders(folders: dict[str, Path]) -> dict[str, HiFT]:
    return {f: _hift(folders[f], f) for f in FAMILIES}


def _golden(family: str, mode: str) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    return dict(np.load(DATA / f"{family}_{mode}.npz")), dict(np.load(DATA / f"{family}_{mode}_rng.npz"))


def _generator(state: np.ndarray) -> torch.Generator:
    gen = torch.Generator()
    gen.set_state(torch.from_numpy(state))
    return gen


def _mel(data: dict[str, np.ndarray], k: int) -> torch.Tensor:
    return torch.from_numpy(data[f"mel_{k}"])


@pytest.mark.parametrize("family", FAMILIES)
def test_every_vocoder_call_has_its_generator_state(family: str) -> None:
    for mode in (*WHOLE, "stream"):
        data, rng = _golden(family, mode)
        mels = sorted(k for k in data if k.startswith("mel_"))
        assert sorted(rng) == sorted(["seeded", *(k.replace("mel_", "hift_") for k in mels)])
        assert all(v.dtype == np.uint8 and v.shape == torch.get_rng_state().shape for v in rng.values())
        assert not np.array_equal(rng["seeded"], rng["hift_0"])  # the LM drew in between


@pytest.mark.parametrize("mode", WHOLE)
@pytest.mark.parametrize("family", FAMILIES)
def test_whole_utterance_audio_equals_the_goldens(vocoders: dict[str, HiFT], family: str, mode: str) -> None:
    data, rng = _golden(family, mode)
    gen = _generator(rng["hift_0"])
    audio, source = vocoders[family].inference(_mel(data, 0), generator=gen)
    assert audio.shape == (1, data["audio"].size) and source.shape == (1, 1, data["audio"].size)
    np.testing.assert_allclose(audio[0].numpy(), data["audio"], atol=TOL, rtol=0)
    if family == "cosyvoice3":  # its noise is the construction-time tables: nothing drawn
        assert torch.equal(gen.get_state(), torch.from_numpy(rng["hift_0"]))


def test_cosyvoice2_streaming_chunks_equal_the_goldens(vocoders: dict[str, HiFT]) -> None:
    """The official v2 stream: the first call's last 3840 samples are held back; the second call
    gets the 8 cached mel frames in front (mel_1 holds them) and the first call's last 3840 source
    samples, and its first 3840 samples are cross-faded with the held ones."""
    data, rng = _golden("cosyvoice2", "stream")
    first, second = data["chunk_lengths"]
    gen = _generator(rng["hift_0"])
    audio0, source0 = vocoders["cosyvoice2"].inference(_mel(data, 0), generator=gen)
    np.testing.assert_allclose(audio0[0, :-OVERLAP].numpy(), data["audio"][:first], atol=TOL, rtol=0)
    # the draws of one call are exactly the official's: the generator is where the official one was
    assert torch.equal(gen.get_state(), torch.from_numpy(rng["hift_1"]))
    audio1, _ = vocoders["cosyvoice2"].inference(
        _mel(data, 1), cache_source=source0[:, :, -OVERLAP:], generator=gen
    )
    assert audio1.shape[1] == second
    window = np.hamming(2 * OVERLAP)
    faded = audio1[0, :OVERLAP].numpy() * window[:OVERLAP] + audio0[0, -OVERLAP:].numpy() * window[OVERLAP:]
    expected = data["audio"][first:]
    np.testing.assert_allclose(faded, expected[:OVERLAP], atol=TOL, rtol=0)
    np.testing.assert_allclose(audio1[0, OVERLAP:].numpy(), expected[OVERLAP:], atol=TOL, rtol=0)


def test_cosyvoice3_streaming_chunks_equal_the_goldens(vocoders: dict[str, HiFT]) -> None:
    """The official v3 stream re-vocodes the whole mel so far: without ``finalize`` the last
    look-ahead frames give no audio; each chunk is the samples past the previous ones."""
    data, _ = _golden("cosyvoice3", "stream")
    first, second = data["chunk_lengths"]
    hift = vocoders["cosyvoice3"]
    audio0, _ = hift.inference(_mel(data, 0), finalize=False)
    assert audio0.shape[1] == first == (data["mel_0"].shape[2] - 3 - 4) * 480 - 480
    np.testing.assert_allclose(audio0[0].numpy(), data["audio"][:first], atol=TOL, rtol=0)
    audio1, _ = hift.inference(_mel(data, 1), finalize=True)
    assert audio1.shape[1] == first + second
    np.testing.assert_allclose(audio1[0, first:].numpy(), data["audio"][first:], atol=TOL, rtol=0)


@pytest.mark.parametrize("family", FAMILIES)
def test_both_weight_norm_forms_and_the_generator_prefix_load_alike(
    folders: dict[str, Path], vocoders: dict[str, HiFT], family: str
) -> None:
    state = torch.load(folders[family] / "hift.pt", weights_only=True)
    old = {}
    for key, value in state.items():  # the pre-parametrization names, as older releases hold them
        key = key.replace(".parametrizations.weight.original0", ".weight_g")
        old["generator." + key.replace(".parametrizations.weight.original1", ".weight_v")] = value
    assert any(k.endswith(".weight_g") for k in old)
    data, rng = _golden(family, "zero_shot")
    ours = _hift(folders[family], family, old).inference(_mel(data, 0), generator=_generator(rng["hift_0"]))[
        0
    ]
    reference = vocoders[family].inference(_mel(data, 0), generator=_generator(rng["hift_0"]))[0]
    assert torch.equal(ours, reference)


def test_a_file_that_does_not_fit_gives_one_line(folders: dict[str, Path]) -> None:
    state = torch.load(folders["cosyvoice3"] / "hift.pt", weights_only=True)
    missing = {k: v for k, v in state.items() if not k.startswith("conv_post.")}
    with pytest.raises(
        VoxDeskError,
        match=r"hift\.pt does not fit its cosyvoice3\.yaml: it has no conv_post\.weight \(and 1 more\)",
    ) as err:
        _hift(folders["cosyvoice3"], "cosyvoice3", missing)
    assert "\n" not in str(err.value)
    wrong = dict(state, **{"m_source.l_linear.weight": torch.zeros(1, 5)})
    with pytest.raises(
        VoxDeskError, match=r"it has m_source\.l_linear\.weight of shape \(1, 5\), not \(1, 9\)"
    ):
        _hift(folders["cosyvoice3"], "cosyvoice3", wrong)


def test_building_draws_nothing_from_the_global_generator(folders: dict[str, Path]) -> None:
    before = torch.get_rng_state()
    for family in FAMILIES:
        _hift(folders[family], family)
    assert torch.equal(torch.get_rng_state(), before)


def test_the_tables_are_drawn_on_demand_with_the_values_of_one_full_draw() -> None:
    """``take`` grows its prefix (never the 260 MB table at once) and any prefix equals the
    same rows of one draw of the whole length from the recorded state."""
    tables = SourceTables.replay(64, 8, 12, 8, 8, 4, 9)
    small = tables.take(1000).clone()
    grown = tables.take(30000)
    again = tables.take(500)
    gen = torch.Generator()
    gen.set_state(tables._state)
    full = torch.rand(1, 30000, 9, generator=gen)
    assert (
        torch.equal(small, full[:, :1000]) and torch.equal(grown, full) and torch.equal(again, full[:, :500])
    )
    assert tables.rand_ini[0, 0] == 0 and tables.rand_ini.shape == (1, 9)


def test_a_config_it_cannot_build_gives_one_line(folders: dict[str, Path]) -> None:
    cfg = load_config(folders["cosyvoice3"] / "cosyvoice3.yaml")
    args = {k: v for k, v in cfg.hift.args.items() if k != "f0_predictor"}
    no_f0 = dataclasses.replace(cfg, hift=dataclasses.replace(cfg.hift, args=args))
    with pytest.raises(VoxDeskError, match=r"cosyvoice3\.yaml: VoxDesk cannot build its hift section") as err:
        HiFT.from_config(no_f0)
    assert "\n" not in str(err.value)
    v1 = dataclasses.replace(cfg, sample_rate=22050)
    with pytest.raises(VoxDeskError, match="runs at 22050 Hz"):
        HiFT.from_config(v1)
