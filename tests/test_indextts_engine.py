"""IndexTTS through the engine: each request's codes equal the single-request reference, and its
audio equals ``reference.synthesize``'s and the official ``infer``'s.

The GPT's reference is ``gpt.generate`` (held to the official codes by tests/test_indextts_gpt.py)
segment by segment on one generator seeded like ``torch.manual_seed(seed)``. The engine runs the
same requests with their beams on its paged cache (shared prompt blocks, forks copied on write,
tables re-pointed by the beams' parents), alone, batched, preempted and cancelled.

The GPT tests hand the runner stand-ins for the rest of the pipeline (the seams of
app/models/indextts/pipeline.py), to keep them fast: the conditioner stand-in gives the golden
style and emotion vector after drawing from the request's generator (as the voice's w2v-BERT calls
draw before the GPT), and the decoder stand-in returns a segment's codes as its "audio" after
drawing noise from it (as the S2Mel solver draws after the GPT), so the draws around and between
segments are in the official order. The end-to-end tests run the folder's real parts.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest
import torch
from tiny_indextts import tiny_ix  # noqa: F401

from app.engine.attention import PagedKVCache
from app.engine.config import EngineConfig
from app.engine.cuda_graphs import CudaGraphs
from app.engine.engine import Engine
from app.engine.events import AudioChunk, RequestFailed, RequestFinished
from app.engine.family import detect_family
from app.engine.request import SynthRequest
from app.engine.voice import VoicePrompt
from app.models.download import validate_model_dir
from app.models.indextts.beam import BeamParams
from app.models.indextts.config import load_config
from app.models.indextts.decoder import PEAK
from app.models.indextts.gpt import UnifiedGPT, generate
from app.models.indextts.models import IndexModels
from app.models.indextts.pipeline import NO_VOICE, Conditioning, Parts, parts_from
from app.models.indextts.reference import synthesize
from app.models.indextts.text import TextFrontend, language_id
from app.models.indextts.weights import load_torch, state_of
from app.voices.fit import misfits, usable_seconds

GOLD = np.load(Path(__file__).parent / "data" / "indextts" / "gpt_codes.npz")
PARAMS = BeamParams(**json.loads(str(GOLD["plain_settings"])))  # the official defaults, 80 codes at most
NOISE = 4  # the stand-ins' draws: per request before the GPT, per segment after it
TEXTS = {
    "hello": ("Hello there, how are you today?", 1),
    "zh": ("今天天气很好，我们去公园散步吧。", 2),  # its search ends before the limit
    "short": ("Good night.", 3),
    "two": ("It was a bright cold day in April, and the clocks were striking thirteen. Winston Smith, his "
            "chin nuzzled into his breast in an effort to escape the vile wind, slipped quickly through "
            "the glass doors of Victory Mansions.", 4),
}  # fmt: skip


@pytest.fixture(scope="module", autouse=True)
def one_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="module")
def gpt(tiny_ix: Path) -> UnifiedGPT:  # noqa: F811
    cfg = load_config(tiny_ix)
    path = tiny_ix / cfg.gpt_checkpoint
    model = UnifiedGPT.from_config(cfg.gpt)
    model.load(state_of(load_torch(path), "model", path))
    return model.eval()


def conditioner(_request: SynthRequest, generator: torch.Generator) -> Conditioning:
    torch.rand(NOISE, generator=generator)  # where the voice's w2v-BERT calls draw
    return Conditioning(torch.from_numpy(GOLD["style"]), torch.from_numpy(GOLD["emovec"]))


def decoder(codes: list[int], _cond, generator: torch.Generator, _last: bool) -> np.ndarray:
    torch.randn(NOISE, generator=generator)  # where the S2Mel noise is drawn
    return np.asarray(codes, np.float32) if codes else np.asarray([-1.0], np.float32)


@pytest.fixture(scope="module")
def frontend(tiny_ix: Path) -> TextFrontend:  # noqa: F811
    return TextFrontend(tiny_ix)


def reference(gpt: UnifiedGPT, frontend: TextFrontend, text: str, seed: int) -> list[list[int]]:
    """Each segment's codes the single-request way, on one generator."""
    lang = "zh" if any("\u4e00" <= c <= "\u9fff" for c in text) else "en"
    generator = torch.Generator().manual_seed(seed)
    cond = conditioner(SynthRequest(text=text), generator)
    with torch.inference_mode():
        rows = gpt.conditioning(cond.style, cond.emovec)
    out = []
    for ids in frontend.segments(text, lang):
        out.append(generate(gpt, rows, ids, language_id(lang), PARAMS, generator))
        decoder(out[-1], None, generator, False)
    return out


@pytest.fixture(scope="module")
def expected(gpt, frontend) -> dict[str, list[list[int]]]:
    return {name: reference(gpt, frontend, text, seed) for name, (text, seed) in TEXTS.items()}


@pytest.fixture
def make_engine(tiny_ix: Path, gpt):  # noqa: F811
    """An engine on the tiny folder with ``parts`` (the stand-ins by default) in place of the
    folder's own pipeline."""

    def make(blocks: int | None = None, max_num_seqs: int = 4, max_model_len: int = 256,
             parts: Parts | None = None) -> Engine:  # fmt: skip
        spec = gpt.kv_spec()
        kv_gb = None
        if blocks is not None:
            per_block = PagedKVCache.bytes_per_block(spec.num_layers, 4, spec.num_kv_heads, spec.head_dim,
                                                     torch.float32)  # fmt: skip
            kv_gb = (blocks * per_block + 1) / 1024**3
        config = EngineConfig(
            model_dir=str(tiny_ix), device="cpu", cpu_precision="float32", block_size=4,
            max_num_seqs=max_num_seqs, max_model_len=max_model_len, kv_cache_gb=kv_gb,
        )  # fmt: skip
        return Engine(config, model=parts or Parts(conditioner, decoder, gpt, PARAMS))

    return make


def run(engine: Engine, names: list[str], cancel_after: dict[int, int] | None = None) -> dict:
    """Submit the texts, step to the end; each request's segments (codes) and its end event."""
    ids = {engine.submit(SynthRequest(text=TEXTS[n][0], seed=TEXTS[n][1])): n for n in names}
    chunks: dict[int, list[list[int]]] = {rid: [] for rid in ids}
    ends: dict[int, object] = {}
    steps = 0
    while engine.has_work():
        for event in engine.step():
            if isinstance(event, AudioChunk):
                chunks[event.request_id].append([int(c) for c in event.samples if c >= 0])
            elif isinstance(event, (RequestFinished, RequestFailed)):
                ends[event.request_id] = event
        steps += 1
        for rid, at in (cancel_after or {}).items():
            if steps == at:
                engine.cancel(rid)
        assert steps < 2000
    return {ids[rid]: (chunks[rid], ends[rid]) for rid in ids}


def test_one_request_gives_the_reference_codes(make_engine, expected) -> None:
    engine = make_engine()
    got = run(engine, ["hello"])
    codes, end = got["hello"]
    assert isinstance(end, RequestFinished)
    assert codes == expected["hello"] and len(codes) == 1 and len(codes[0]) > 5
    assert engine.scheduler.blocks.num_free == len(engine.scheduler.blocks.blocks)
    # again: the prompt's full blocks come from the prefix cache (salted by the conditioning)
    codes, end = run(engine, ["hello"])["hello"]
    assert codes == expected["hello"] and end.stats["cached_tokens"] > 0


def test_two_segments_go_on_in_one_stream(make_engine, expected, frontend) -> None:
    assert len(frontend.segments(TEXTS["two"][0], "en")) >= 2
    got = run(make_engine(), ["two"])
    assert got["two"][0] == expected["two"]


def test_a_batch_gives_each_request_its_own_codes(make_engine, expected) -> None:
    names = ["hello", "zh", "two"]  # two: its second segment starts inside the batch
    got = run(make_engine(), names)
    assert len({got[n][1].n_patches for n in names}) == 3  # their searches end at different steps
    for name in names:
        assert isinstance(got[name][1], RequestFinished)
        assert got[name][0] == expected[name], name


class _EagerGraph:
    """What a captured decode graph replays, run eagerly (no GPU here): the step over a whole
    bucket of static rows, block tables at their full width."""

    def __init__(self, runner, rows: int) -> None:
        self.runner, self.rows = runner, rows

    def replay(self) -> None:
        self.runner.step_core(self.rows, 0, self.runner.max_blocks)


def test_the_graphed_step_gives_the_same_codes(make_engine, expected) -> None:
    """Through :class:`CudaGraphs`' replay (buckets of rows, spare rows padded onto the scratch
    block, full-width tables), each request still gets its codes."""
    engine = make_engine(max_num_seqs=3)
    runner = engine.runner
    graphs = CudaGraphs(runner, runner.max_rows, 0, prefill=False)
    assert graphs.sizes == [1, 2, 4, 8, 9]
    graphs.graphs = {bs: _EagerGraph(runner, bs) for bs in graphs.sizes}
    runner.graphs = graphs
    got = run(engine, ["hello", "zh", "two"])
    for name in ("hello", "zh", "two"):
        assert got[name][0] == expected[name], name


def test_a_preempted_request_draws_the_same_beams_again(make_engine, expected) -> None:
    """Too few blocks for both: the newer request is preempted mid-search (rewound to its
    segment's prompt, its generator restored) and still gives its codes."""
    engine = make_engine(blocks=44, max_model_len=112)
    sched, drawn = engine.scheduler, []
    preempt = sched.preempt

    def record(seq) -> None:
        drawn.append(seq.num_generated)
        preempt(seq)

    sched.preempt = record
    got = run(engine, ["hello", "zh"])
    assert drawn and min(drawn) > 0  # preempted with codes drawn, i.e. mid-search
    for name in ("hello", "zh"):
        assert got[name][0] == expected[name], name
    assert engine.scheduler.blocks.num_free == 44


def test_cancel_mid_generation_frees_every_block(make_engine, expected) -> None:
    engine = make_engine()
    first = engine.submit(SynthRequest(text=TEXTS["hello"][0], seed=1))
    other = engine.submit(SynthRequest(text=TEXTS["short"][0], seed=3))
    for _ in range(4):
        engine.step()
    blocks = engine.scheduler.blocks
    seq = engine.scheduler.find(first)
    assert seq is not None and len({tuple(t) for t in seq.block_tables}) > 1  # the beams forked
    engine.cancel(first)
    events = []
    while engine.has_work():
        events += engine.step()
    assert RequestFailed(first, "Cancelled.") in events
    assert first not in engine.runner._states
    finished = [e for e in events if isinstance(e, RequestFinished)]
    assert [e.request_id for e in finished] == [other]
    assert blocks.num_free == len(blocks.blocks)
    assert all(b.ref_count == 0 for b in blocks.blocks)


def test_a_segment_longer_than_the_positions_is_one_line(make_engine) -> None:
    """Checked for every segment before the request starts, not when it comes up."""
    engine = make_engine(max_model_len=200)  # the long segment's prompt and 80 codes need more
    rid = engine.submit(SynthRequest(text=TEXTS["two"][0], seed=1))
    events = engine.step()
    assert [e.message for e in events if isinstance(e, RequestFailed) and e.request_id == rid] == [
        "A text segment is too long for the positions set aside (max_model_len): raise it or split the text."
    ]


def test_the_language_comes_from_the_script(make_engine) -> None:
    runner = make_engine().runner
    cases = {"Hello.": "en", "你好。": "zh", "今日は晴れです。": "ja", "مرحبا": "ar", "¡Hola, señor!": "en"}
    assert {text: runner.language(SynthRequest(text=text)) for text in cases} == cases
    assert runner.language(SynthRequest(text="¡Hola, señor!", language="es")) == "es"  # the request's own


def test_the_voice_guide_limits_are_the_speaker_cut_whatever_the_script(make_engine) -> None:
    """The recording is three conditioning positions and the frontend splits long text, so the
    window's checks ahead (app/voices/fit.py) bind nothing but the official cut of the speaker clip."""
    engine = make_engine(max_model_len=512)
    runner = engine.runner
    limits = runner.limits(engine.max_model_len)
    long = " ".join([TEXTS["two"][0]] * 12)
    assert usable_seconds(limits, [long], "reference") == usable_seconds(limits, ["Hi."], "reference") == 15.0
    assert misfits(limits, ["Hi.", long], 60.0, "reference") == []  # a long recording is cut, not refused
    # honest: the text is split into segments that each fit the positions (make_sequence's check)
    segments = runner.frontend.segments(long, "en", runner.segment_tokens)
    assert len(segments) > 3
    assert all(len(runner._positions(t)) + PARAMS.max_mel_tokens <= engine.max_model_len for t in segments)
    with pytest.raises(ValueError, match="max_voice_seconds"):
        dataclasses.replace(limits, max_voice_seconds=None)


# ---- end to end: the pipeline's parts (models.py, voice.py, decoder.py) behind the seams --------
INFER = json.loads((Path(__file__).parent / "data" / "indextts" / "infer.json").read_text(encoding="utf-8"))
SEGMENT_TOKENS = {"plain": 120, "two_segments": 10}  # the goldens' max_text_tokens_per_segment


@pytest.fixture(scope="module")
def models(tiny_ix: Path) -> IndexModels:  # noqa: F811
    return IndexModels.load(tiny_ix)


def speaker() -> np.ndarray:
    clips = np.load(Path(__file__).parent / "data" / "indextts" / "infer_clips.npz")
    return clips["speaker"].astype(np.float32) / 32768.0  # the int16 clip as librosa reads it


@pytest.mark.parametrize("case", list(SEGMENT_TOKENS))
def test_audio_equals_the_reference_and_the_official(make_engine, models, case: str) -> None:
    """Text → audio through the engine, beside a second request (a batch): the samples equal
    ``reference.synthesize``'s within 1e-5 and the official ``infer``'s float wav within 1e-3 of
    full scale (tests/data/indextts/infer_<case>.npz)."""
    spec = INFER["cases"][case]
    params = BeamParams(max_mel_tokens=INFER["max_mel_tokens"])
    clip, rate = speaker(), INFER["rate"]
    ref = synthesize(models, spec["text"], spec["lang"], clip, rate, seed=spec["seed"], params=params,
                     max_tokens=SEGMENT_TOKENS[case])  # fmt: skip
    assert ref.codes == spec["codes"]
    parts = parts_from(models, params, segment_tokens=SEGMENT_TOKENS[case])
    engine = make_engine(parts=parts)
    voice = VoicePrompt(reference_audio=clip, sample_rate=rate)
    rid = engine.submit(SynthRequest(text=spec["text"], voice=voice, seed=spec["seed"]))
    engine.submit(SynthRequest(text="Good night.", voice=voice, seed=9))
    audio: list[np.ndarray] = []
    finished = []
    while engine.has_work():
        for event in engine.step():
            if isinstance(event, AudioChunk) and event.request_id == rid:
                audio.append(event.samples)
            finished += [event.request_id] if isinstance(event, RequestFinished) else []
    assert rid in finished and len(audio) == len(spec["codes"])
    assert len(parts.voices) == 1  # the two requests' voice was computed once
    got = np.concatenate(audio)
    want = ref.wav.numpy() / PEAK
    assert got.shape == want.shape
    assert np.abs(got - want).max() <= 1e-5
    official = np.load(Path(__file__).parent / "data" / "indextts" / f"infer_{case}.npz")["wav"] / PEAK
    assert got.shape == official.shape
    assert np.abs(got - official).max() <= 1e-3


def test_the_registered_family_loads_the_folder(tiny_ix: Path, tmp_path: Path) -> None:  # noqa: F811
    """The folder is IndexTTS's (app/models/__init__.py), checked in its own words, and the
    family's factory loads every part of it; a request without a voice is one line."""
    assert detect_family(tiny_ix) == "indextts"
    assert validate_model_dir(tiny_ix) == []
    for entry in tiny_ix.iterdir():  # the same folder without its S2Mel weights
        if entry.name != "s2mel.pth":
            (tmp_path / entry.name).symlink_to(entry)
    assert detect_family(tmp_path) == "indextts"
    assert any("S2Mel (s2mel.pth) is missing" in line for line in validate_model_dir(tmp_path))
    engine = Engine(EngineConfig(model_dir=str(tiny_ix), device="cpu", cpu_precision="float32",
                                 max_num_seqs=2, max_model_len=512))  # fmt: skip
    assert engine.info.name == "indextts" and engine.sample_rate == 22050
    rid = engine.submit(SynthRequest(text="Hello."))
    assert RequestFailed(rid, NO_VOICE) in engine.step()
