"""IndexTTS-2.5 behind the engine's :class:`~app.engine.family.FamilyRunner`: the GPT's beams.

A request's text becomes the official segments (:class:`~.text.TextFrontend`); each segment is one
beam search of the GPT, spoken in order into one stream through :meth:`Sequence.next_part`, as
CosyVoice speaks its pieces. A segment's positions are its prompt (conditioning, text,
``start_mel``: :meth:`UnifiedGPT.prompt`), prefilled once into the first block table; its
``params.num_beams`` beams (``Sequence.width``) share those blocks and each step:

1. the KV blocks the block manager forked (``Sequence.copies``) are copied, K and V, every layer;
2. the code each beam drew last step is written at its position through the beam's own table
   (lazily, one step late, so a re-pointed table writes its new owner's code) and the GPT gives
   every beam's logits; right after the prefill the prompt's one row stands for all beams;
3. one :meth:`BeamState.step` per request on its own generator gives the codes and the beam each
   new beam continues (``StepResult.beam_parents``: the engine re-points the tables).

When a segment's search is done, its winning codes go to the segment decoder (codes → audio) and
the next segment takes the sequence's positions, or the request is done.

Randomness: one generator per request, seeded as ``torch.manual_seed(seed)`` seeds the global one
the official ``infer`` draws from, in the official order (the voice's draws, segment 1's beams, its
decoder's noise, segment 2's beams, ...); on a GPU the voice's draws are on a CPU generator seeded
alike and the rest on the device's, as the official draws them. The generator's state is saved
when a segment begins, so a preempted request (rewound to its segment's prompt by the scheduler)
draws the same beams again (``start``).

The rest of the pipeline comes in through two seams (:mod:`.pipeline`): a conditioner (request →
speaker style and emotion vector, plus the voice and duration factor the decoder needs) and a segment
decoder (codes → audio); :func:`load` builds them over the folder's models, or takes them in
``model=`` (tests, benchmarks). The GPT's prefill and step are :mod:`.gpt_step`'s.
"""

from __future__ import annotations

import dataclasses
import hashlib
import logging
import random
import re
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from app.engine.config import EngineConfig
from app.engine.family import FamilyInfo, FamilyRunner, StepResult
from app.engine.request import SynthRequest
from app.engine.sequence import Sequence
from app.errors import VoxDeskError
from app.models.indextts.audio_in import FEATURE_RATE, MAX_SECONDS
from app.models.indextts.beam import BeamState
from app.models.indextts.decoder import RATE
from app.models.indextts.gpt_step import GPTStep
from app.models.indextts.models import IndexModels
from app.models.indextts.pipeline import VOICE_RATE, Conditioning, Parts, parts_from
from app.models.indextts.text import LANGUAGES, TextFrontend, language_id
from app.voices.fit import ModelLimits

log = logging.getLogger(__name__)
# a voice from its audio alone; speed as the official duration factor (1 / speed); an emotion from a
# clip or 8 weights ("emotion_text" too when the folder has QwenEmotion); the text's language
CONTROLS = frozenset({"reference", "speed", "emotion", "language"})
FAILED = "Speech generation failed for this request: try again or another text."
_EMPTY = np.zeros(0, np.float32)
_SCRIPTS = (
    ("ja", re.compile("[\u3040-\u30ff]")),
    ("zh", re.compile("[\u3400-\u4dbf\u4e00-\u9fff]")),
    ("ar", re.compile("[\u0600-\u06ff]")),
)


@dataclass
class _State:
    """A request's decoding state outside the engine's Sequence."""

    segments: list[list[int]]  # the text ids of each segment (as the official infer hands them over)
    lang: int
    cond: Conditioning
    rows: torch.Tensor  # [3, d] the GPT's conditioning rows
    index: int = 0  # the segment being spoken
    prompt: torch.Tensor | None = None  # [P, d] the segment's prompt embeddings
    saved: torch.Tensor | None = None  # the generator's state when the segment's search began
    beams: BeamState | None = None
    carry: torch.Tensor | None = None  # [1, V] the prompt's logits, for the first step
    pending: list[int] = field(default_factory=list)  # each beam's code drawn last step, not yet written


class IndexRunner(GPTStep, FamilyRunner):
    def __init__(
        self,
        config: EngineConfig,
        parts: Parts,
        frontend: TextFrontend,
        device: torch.device,
    ) -> None:
        gpt, params = parts.gpt, parts.params
        if params.max_mel_tokens > gpt.max_mel_tokens:
            raise VoxDeskError(f"max_mel_tokens {params.max_mel_tokens} is more than this model's "
                               f"{gpt.max_mel_tokens}: use a smaller value.")  # fmt: skip
        self.config = config
        self.gpt, self.frontend = gpt, frontend
        self.conditioner, self.decoder, self.voices = parts.conditioner, parts.decoder, parts.voices
        self.params, self.segment_tokens = params, parts.segment_tokens
        self.device = device
        self.dtype = next(gpt.parameters()).dtype
        self.info = FamilyInfo(
            name="indextts",
            label="IndexTTS-2.5",
            architecture="indextts25",
            controls=CONTROLS | ({"emotion_text"} if parts.emotion_text else set()),
            sample_rate=RATE,
            voice_rate=VOICE_RATE,
            languages=LANGUAGES,
        )
        # the longest segment: conditioning, [start] text [stop], start_mel, then every code
        longest = 3 + gpt.max_text_tokens + 2 + 1 + params.max_mel_tokens
        self.max_model_len = min(config.max_model_len, longest)
        self.mel_ids = gpt.text_embedding.num_embeddings  # code c's position id: mel_ids + c
        self._states: dict[int, _State] = {}

    # ---- requests ---------------------------------------------------------------------------
    def language(self, request: SynthRequest) -> str:
        """The request's language code (one of :data:`~.text.LANGUAGES`, checked by the engine), or
        when it names none, the text's script's (kana: ja, Han: zh, Arabic: ar, otherwise en; Spanish
        text needs the request to say so)."""
        if request.language:
            return request.language
        for lang, script in _SCRIPTS:
            if script.search(request.text):
                return lang
        return "en"

    def limits(self, max_positions: int) -> ModelLimits:
        """The recording is three conditioning positions whatever its length, and the frontend splits
        long text into segments that fit: only the official cut of the speaker clip (its first
        MAX_SECONDS) limits what is used. The rest describes the model (w2v-BERT's 50 Hz speaker
        features from 16 kHz audio, 25 codes a second, its text tokens) and decides nothing."""
        return ModelLimits(
            max_positions=max_positions,
            encoder_rate=FEATURE_RATE,
            encoder_samples_per_patch=FEATURE_RATE // 50,
            output_patches_per_second=25.0,
            count_tokens=self.frontend.count,
            max_voice_seconds=MAX_SECONDS,
            fixed_conditioning=True,
        )

    @torch.inference_mode()
    def make_sequence(self, rid: int, request: SynthRequest, block_size: int) -> Sequence:
        seed = secrets.randbelow(2**31) if request.seed is None else request.seed
        # torch.manual_seed(seed) seeds the CPU generator and the device's: the official code draws
        # on both (the voice's and QwenEmotion's draws on the CPU; beams and noise on the device)
        cpu = torch.Generator().manual_seed(seed)
        generator = cpu if self.device.type == "cpu" else torch.Generator(self.device).manual_seed(seed)
        cond = self.conditioner(request, cpu)
        lang = self.language(request)
        # Python's generator, seeded alike, for the Japanese path's draws (text.py, step 5)
        segments = self.frontend.segments(request.text, lang, self.segment_tokens, rng=random.Random(seed))
        if any(len(self._positions(t)) + self.params.max_mel_tokens > self.max_model_len for t in segments):
            raise VoxDeskError("A text segment is too long for the positions set aside (max_model_len): "
                               "raise it or split the text.")  # fmt: skip
        to = {"device": self.device, "dtype": self.dtype}
        rows = self.gpt.conditioning(cond.style.to(**to), cond.emovec.to(**to))
        state = _State(segments, language_id(lang), cond, rows)
        ids = self._prompt(state)
        seq = Sequence(request, ids, [None] * len(ids), self.params.max_mel_tokens, seed, block_size, rid)
        seq.width = self.params.num_beams
        seq.generator = generator
        # the conditioning is not in the ids: it starts the prefix cache's hash chain
        seq.salt = hashlib.blake2b(rows.float().cpu().numpy().tobytes() + bytes([state.lang])).digest()
        self._begin_search(seq, state)
        self._states[seq.id] = state
        return seq

    def _positions(self, text: list[int]) -> list[int]:
        """A segment's prompt position ids: 0 for the conditioning rows, the text ids as the GPT
        embeds them, ``start_mel``."""
        gpt = self.gpt
        kept = [i for i in text if i not in (gpt.start_text, gpt.stop_text)]
        return [0, 0, 0, gpt.start_text, *kept, gpt.stop_text, self.mel_ids + gpt.start_mel]

    def _prompt(self, state: _State) -> list[int]:
        """The current segment's prompt embeddings (into ``state.prompt``) and position ids."""
        text = state.segments[state.index]
        state.prompt = self.gpt.prompt(state.rows, text, state.lang).to(self.dtype)
        ids = self._positions(text)
        if len(ids) != state.prompt.shape[0]:
            raise RuntimeError("the GPT's prompt rows and the sequence's positions disagree")
        return ids

    def _begin_search(self, seq: Sequence, state: _State) -> None:
        """A fresh beam search for the current segment, from the generator as it is now (saved)."""
        state.saved = seq.generator.get_state()
        state.beams = BeamState(self.params, [1, self.gpt.start_mel], seq.generator, self.gpt.stop_mel)
        state.pending = []

    def start(self, seqs: list[Sequence]) -> None:
        """The segment's search from its start: a new request, or one preempted (rewound to its
        segment's prompt), whose generator goes back to the state the search began with."""
        for seq in seqs:
            state = self._states[seq.id]
            seq.generator.set_state(state.saved)
            self._begin_search(seq, state)

    def release(self, seq: Sequence) -> None:
        self._states.pop(seq.id, None)

    def resolve_voice(self, voice: Any) -> tuple[Any, dict[str, np.ndarray]]:
        """The voice's conditions (kept per engine; from ``voice.features`` when the library has
        them) and the entries newly computed, for the library to keep (app/voices/latents.py)."""
        if voice is None or self.voices is None:
            return voice, {}
        _conditions, entries = self.voices.resolve(voice)
        if not entries:
            return voice, {}
        return dataclasses.replace(voice, features={**(voice.features or {}), **entries}), entries

    # ---- the step ---------------------------------------------------------------------------
    @torch.inference_mode()
    def decode(self, seqs: list[Sequence]) -> StepResult:
        self.copy_blocks(seqs)
        logits = self.write_pending([s for s in seqs if s.num_computed < len(s)])
        n = len(seqs)
        out = StepResult([_EMPTY] * n, [False] * n)
        for i, seq in enumerate(seqs):
            st = self._states[seq.id]
            rows = logits.pop(seq.id, None)
            if rows is None:
                rows, st.carry = st.carry, None
            tokens, parents = st.beams.step(rows)
            if st.beams.done:
                self._segment_done(i, seq, st, out)
                continue
            st.pending = tokens
            seq.ids.append(0)  # the beams' codes are their own; the position is what counts
            seq.patches.append(None)
            out.beam_parents[i] = parents
        return out

    def _segment_done(self, i: int, seq: Sequence, st: _State, out: StepResult) -> None:
        """The winner's codes → audio; then the next segment, or the request is done."""
        last = st.index + 1 == len(st.segments)
        try:
            out.audio[i] = self.decoder(st.beams.best(), st.cond, seq.generator, last)
        except VoxDeskError as exc:
            out.error[i] = str(exc)
            return
        except Exception:  # noqa: BLE001 - this request fails, the batch goes on
            log.exception("IndexTTS decoder failed")
            out.error[i] = FAILED
            return
        if last:
            out.done[i] = True
            return
        st.index += 1
        ids = self._prompt(st)
        seq.next_part(ids, [None] * len(ids))
        seq.max_patches = self.params.max_mel_tokens
        self._begin_search(seq, st)
        out.next_part[i] = True


def load(
    config: EngineConfig,
    device: torch.device,
    dtype: str | None,
    progress: Callable[[float, str], None],
    model: Parts | None = None,
) -> IndexRunner:
    """The family's factory (app/models/__init__.py): every part of the folder
    (:meth:`IndexModels.load`: checked, ``weights_only``, strict), or the ``model`` a caller built
    (tests, benchmarks). The GPT runs in ``dtype`` (float32 when None); the rest stays float32."""
    if model is None:
        models = IndexModels.load(config.model_dir, device, lambda f, what: progress(0.05 + 0.5 * f, what))
        model, frontend = parts_from(models, voices=config.voice_cache_size), models.text
    else:
        frontend = model.frontend or TextFrontend(config.model_dir)
    model.gpt = model.gpt.to(device=device, dtype=getattr(torch, dtype) if dtype else torch.float32).eval()
    return IndexRunner(config, model, frontend, device)
