"""The engine's side of the family interface (app/engine/family.py), on VoxCPM's runner.

The engine knows no family: nothing under app/engine/ imports a model package. A runner that
speaks a long text as several LM runs (``StepResult.next_part``, as CosyVoice's does) gets one
audio stream: its KV blocks are freed and it is prefilled again for each part, while its chunk
numbering, decoding state and stats go on, and the requests beside it are untouched.
"""

import re
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import torch

from app.engine import Engine, EngineConfig, SynthRequest
from app.engine.events import AudioChunk, RequestFailed, RequestFinished, RequestRetried
from app.engine.family import FamilyInfo
from app.engine.request import EmotionControl
from app.engine.sequence import Status
from app.errors import VoxDeskError
from app.models.voxcpm.runner import VoxCPMRunner

ENGINE_DIR = Path(__file__).resolve().parent.parent / "app" / "engine"


def test_the_engine_imports_no_model_family():
    """Only the registry (``import app.models``, which registers the families) is allowed."""
    pattern = re.compile(r"^\s*(from\s+app\.models(\.\w+)*\s+import|import\s+app\.models\.)", re.MULTILINE)
    offenders = [p.name for p in ENGINE_DIR.glob("*.py") if pattern.search(p.read_text(encoding="utf-8"))]
    assert offenders == []


class _Parts(VoxCPMRunner):
    """VoxCPM speaking each "|"-separated piece of a text as its own LM run into one stream,
    the way CosyVoice speaks long text: when a part ends, the next piece's prefill replaces
    the sequence's positions."""

    def start(self, seqs):
        self.started += [s.id for s in seqs]
        super().start(seqs)

    def make_sequence(self, rid, request, block_size):
        first, *rest = request.text.split("|")
        self.rest[rid] = rest
        return super().make_sequence(rid, replace(request, text=first), block_size)

    def decode(self, seqs):
        out = super().decode(seqs)
        for i, seq in enumerate(seqs):
            if out.done[i] and self.rest.get(seq.id):
                piece = replace(seq.request, text=self.rest[seq.id].pop(0))
                nxt = super().make_sequence(seq.id, piece, seq.block_size)
                seq.next_part(nxt.ids, nxt.patches)
                seq.max_patches = nxt.max_patches
                self.parts.append((seq.id, len(nxt.ids)))
                out.done[i], out.next_part[i] = False, True
        return out


@pytest.fixture(scope="module")
def engine(tiny_v2):
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    cfg = EngineConfig(model_dir=str(tiny_v2), device="cpu", block_size=4, cpu_precision="float32")
    eng = Engine(cfg)
    eng.runner.__class__ = _Parts
    eng.runner.started, eng.runner.rest, eng.runner.parts = [], {}, []
    yield eng
    eng.shutdown()
    torch.set_num_threads(before)


def _speak(engine, requests):
    ids = [engine.submit(r) for r in requests]
    events, requeued = [], []
    while engine.has_work():
        step = engine.step()
        events += step
        for rid, n in engine.runner.parts:  # the step that ended a part left it to be prefilled
            seq = engine.scheduler.find(rid)
            requeued.append((seq.status, list(seq.block_table), len(seq), n))
        engine.runner.parts.clear()
    return ids, events, requeued


def test_next_part_continues_one_stream_through_a_fresh_prefill(engine):
    plain = SynthRequest("a request beside it", seed=5, min_len=99, max_len=6, retry_badcase=False)
    parted = SynthRequest(
        "first piece here|and then a second", seed=9, min_len=99, max_len=4, retry_badcase=False
    )
    (alone,), alone_events, _ = _speak(engine, [plain])
    (p, q), events, requeued = _speak(engine, [parted, plain])

    chunks = [e for e in events if isinstance(e, AudioChunk) and e.request_id == p]
    done = next(e for e in events if isinstance(e, RequestFinished) and e.request_id == p)
    assert [c.index for c in chunks] == list(range(8))  # 4 patches a part, one numbering
    assert not any(isinstance(e, RequestRetried) for e in events)
    assert done.n_patches == 8 and done.stats["steps"] == 8.0
    sent = sum(len(c.samples) for c in chunks)
    assert done.stats["audio_s"] == pytest.approx(sent / engine.sample_rate)
    assert engine.runner.started.count(p) == 1  # its decoding state was not reset between parts
    # the part boundary freed its KV and queued the new positions for a prefill of their own
    assert requeued == [(Status.WAITING, [], requeued[0][3], requeued[0][3])]
    tokenizer = engine.runner.tokenizer
    first, second = (len(tokenizer(t)) + 1 for t in ("first piece here", "and then a second"))
    assert done.stats["prefill_tokens"] == first + second == first + requeued[0][2]

    # the request beside it speaks as alone (batched GEMMs round differently: the batch tests' tolerance)
    def audio(evs, rid):
        return np.concatenate([e.samples for e in evs if isinstance(e, AudioChunk) and e.request_id == rid])

    np.testing.assert_allclose(audio(events, q), audio(alone_events, alone), atol=1e-3, rtol=0)
    blocks = engine.scheduler.blocks
    assert blocks.num_free == len(blocks.blocks) and len(engine.scheduler) == 0
    assert sorted(engine.scheduler.free_slots) == list(range(engine.config.max_num_seqs))


def test_a_control_the_family_lacks_is_refused_in_one_line(engine):
    assert not engine.info.has("instruction")
    rid = engine.submit(SynthRequest("hello", instruction="Speak cheerfully"))
    (failed,) = engine.step()
    assert isinstance(failed, RequestFailed) and failed.request_id == rid
    assert failed.message == "VoxCPM2 does not take an instruction (how to speak): leave it empty."
    assert not engine.has_work()


@pytest.mark.parametrize(
    ("request_", "message"),
    [
        (SynthRequest("hello", emotion=EmotionControl(vector=(0, 0.5, 0, 0, 0, 0, 0, 0))),
         "VoxCPM2 does not take an emotion: leave it on the voice's own."),
        (SynthRequest("hello", language="en"),
         "VoxCPM2 does not take a language (it reads the text as it is): leave it on automatic."),
    ],
)
def test_an_emotion_or_language_the_family_lacks_is_refused_in_one_line(engine, request_, message):
    assert not engine.info.has("emotion") and not engine.info.has("language")
    rid = engine.submit(request_)
    (failed,) = engine.step()
    assert isinstance(failed, RequestFailed) and failed.request_id == rid
    assert failed.message == message
    assert not engine.has_work()


def test_a_language_the_family_does_not_name_is_refused():
    info = FamilyInfo("x", "X", "x", frozenset({"language"}), 16000, 16000, languages=("zh", "en"))
    info.refuse(SynthRequest("hello", language="en"))
    with pytest.raises(VoxDeskError, match="^X does not speak 'fr': choose one of zh, en, or automatic.$"):
        info.refuse(SynthRequest("hello", language="fr"))
