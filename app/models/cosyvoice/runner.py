"""CosyVoice2 / Fun-CosyVoice3 behind the engine's :class:`~app.engine.family.FamilyRunner`.

A request becomes one LM run per piece of its normalized text (the official
``text_normalize(split=True)``), spoken in order into one audio stream: when a piece's LM stops,
its :class:`~.stream.TokenStream` finishes, the sequence's positions are replaced by the next
piece's prefix (:meth:`Sequence.next_part`) and ``StepResult.next_part`` tells the engine to
free its blocks and prefill it again, keeping the stream, chunk numbering and stats.

Positions: a piece's LM prefix (:mod:`.plan`: mode, pieces, ids) then the generated speech
tokens, all in ``Sequence.ids`` in one id space, so the prefix cache hashes them. The LM's
prefill and graphed decode step are :mod:`.lm_step`'s; sampling, the flow (batched over the rows
due, :func:`.stream.run_flow`) and the vocoder run eagerly after it.

Randomness: each request has its own CPU generator seeded with ``request.seed``; its draws
follow the official global generator's order (``set_all_random_seed`` then a call): the LM's
sampling, then CosyVoice2's vocoder per call. Streaming CosyVoice2 is the exception: the
official LM thread and vocoder share the global generator in an order set by timing, and the
goldens run the LM to its end first, which a stream cannot; there the vocoder draws from a
second generator seeded with the same seed, so the tokens still equal the official ones and a
seed still gives the same audio every time.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import torch

from app.engine.attention import PagedKVCache
from app.engine.config import EngineConfig
from app.engine.family import FamilyInfo, FamilyRunner, StepResult
from app.engine.request import SynthRequest
from app.engine.sequence import Sequence
from app.engine.voice import VoicePrompt
from app.errors import VoxDeskError
from app.models.cosyvoice import stream as cvstream
from app.models.cosyvoice.config import load_config
from app.models.cosyvoice.flow_graphs import GraphedEstimator
from app.models.cosyvoice.flow_v2 import FlowV2
from app.models.cosyvoice.flow_v3 import FlowV3
from app.models.cosyvoice.frontend import Frontend
from app.models.cosyvoice.hift import HiFT
from app.models.cosyvoice.lm import CosyLM
from app.models.cosyvoice.lm_step import LMStep
from app.models.cosyvoice.plan import (
    SPEECH,
    Piece,
    check_request,
    plan_pieces,
    prefix_ids,
    request_streams,
)
from app.models.cosyvoice.sampling import SamplingParams, sample_batch
from app.models.cosyvoice.text import prepare as prepare_text
from app.models.cosyvoice.tokenizer import CosyTokenizer
from app.models.cosyvoice.voice import NO_VOICE, Features, VoiceFeatureCache, with_features
from app.models.cosyvoice.weights import check_folder, load_pt
from app.voices.fit import ModelLimits

log = logging.getLogger(__name__)
LABELS = {"cosyvoice2": "CosyVoice2", "cosyvoice3": "Fun-CosyVoice3"}
CONTROLS = frozenset({"speed", "instruction", "prompt", "reference", "stream"})
FAILED = "Speech generation failed for this request: try again or another text."


@dataclass
class _State:
    """A request's decoding state outside the engine's Sequence."""

    pieces: list[Piece]
    voice: cvstream.Voice
    streaming: bool
    speed: float
    vocoder_gen: torch.Generator
    index: int = 0  # the piece being spoken
    prefix: torch.Tensor | None = None  # [T', H] embeddings of the piece's prefix positions
    logp: torch.Tensor | None = None  # [V] the next token's log-probabilities (after prefill/step)
    decoded: list[int] = field(default_factory=list)  # the piece's LM tokens (the sampler's window)
    spoken: list[int] = field(default_factory=list)  # the tokens the flow got in earlier pieces
    hop: cvstream.Hop = field(default_factory=cvstream.Hop)
    stream: cvstream.TokenStream | None = None

    @property
    def piece(self) -> Piece:
        return self.pieces[self.index]


class CosyVoiceRunner(LMStep, FamilyRunner):
    def __init__(
        self,
        config: EngineConfig,
        family: str,
        lm: CosyLM,
        flow: torch.nn.Module,
        hift: HiFT,
        frontend: Frontend,
        tokenizer: CosyTokenizer,
        params: SamplingParams,
        device: torch.device,
    ) -> None:
        self.config = config
        self.family = family
        self.lm, self.flow, self.hift = lm, flow, hift
        self.tokenizer = tokenizer
        self.params = params
        self.device = device
        self.dtype = next(lm.parameters()).dtype
        self.info = FamilyInfo(
            name="cosyvoice",
            label=LABELS[family],
            architecture=family,
            controls=CONTROLS,
            sample_rate=24000,
            voice_rate=24000,
        )
        self.max_model_len = config.max_model_len
        self.voices = VoiceFeatureCache(frontend, self.info.voice_rate, config.voice_cache_size)
        self.stop_ids = frozenset(int(i) for i in lm.stop_ids)
        self._states: dict[int, _State] = {}
        self.kv: PagedKVCache | None = None

    # ---- requests -------------------------------------------------------------------------
    def limits(self, max_positions: int) -> ModelLimits:
        """25 speech tokens a second, from 16 kHz audio, at most MAX_SECONDS of voice."""
        from app.models.cosyvoice.voice import MAX_SECONDS
        encode = self.tokenizer.encode
        return ModelLimits(
            max_positions=max_positions,
            encoder_rate=16000,
            encoder_samples_per_patch=640,
            output_patches_per_second=25.0,
            count_tokens=lambda text: len(encode(text)) if text else 0,
            max_voice_seconds=MAX_SECONDS,
        )

    def resolve_voice(self, voice: VoicePrompt | None) -> tuple[VoicePrompt | None, dict[str, np.ndarray]]:
        """The voice with its features as cache entries ("cv_speech_tokens", "cv_embedding",
        "cv_prompt_feat"; cached per engine by content), and those entries for the library."""
        if voice is None:
            return None, {}
        _feats, entries = self.voices.resolve(voice)
        return (with_features(voice, entries) if entries else voice), entries

    def make_sequence(self, rid: int, request: SynthRequest, block_size: int) -> Sequence:
        if request.voice is None:
            raise VoxDeskError(NO_VOICE)
        check_request(request, self.info.label)
        feats, _ = self.voices.resolve(request.voice)
        pieces = plan_pieces(
            request, self.family, self.tokenizer.encode, feats.speech_tokens.tolist(), self.params,
            self.max_model_len,
        )  # fmt: skip
        seed = secrets.randbelow(2**31) if request.seed is None else request.seed
        state = _State(
            pieces,
            self._flow_voice(feats),
            request_streams(request),
            request.speed,
            torch.Generator().manual_seed(seed),
        )
        ids = prefix_ids(state.piece)
        seq = Sequence(request, ids, [None] * len(ids), state.piece.max_len, seed, block_size, rid)
        seq.generator = torch.Generator().manual_seed(seed)  # the LM's draws (on the CPU)
        self._begin_piece(seq, state)
        self._states[seq.id] = state
        return seq

    def _flow_voice(self, feats: Features) -> cvstream.Voice:
        dev = self.device
        return cvstream.Voice(
            tokens=torch.from_numpy(feats.speech_tokens)[None].to(dev),
            feat=torch.from_numpy(feats.prompt_feat)[None].to(dev),
            embedding=torch.from_numpy(feats.embedding)[None].to(dev),
        )

    @torch.inference_mode()
    def _begin_piece(self, seq: Sequence, state: _State) -> None:
        """The LM prefix embeddings and a fresh token stream for the current piece."""
        piece = state.piece
        text = torch.tensor(piece.text_ids, dtype=torch.long, device=self.device)
        speech = torch.tensor(piece.prompt_speech, dtype=torch.long, device=self.device)
        state.prefix = self.lm.prefix_embeds(text, speech)
        if state.prefix.shape[0] != len(seq.ids):
            raise RuntimeError("the LM prefix layout and the sequence's positions disagree")
        state.decoded = []
        state.logp = None
        # v2's vocoder draws from the LM's generator after the LM, except when streaming (docstring)
        gen = state.vocoder_gen if state.streaming else seq.generator
        state.stream = cvstream.TokenStream(
            self.family, self.hift, state.voice, state.streaming, state.speed, state.hop, gen
        )

    def release(self, seq: Sequence) -> None:
        self._states.pop(seq.id, None)

    def spoken(self, seq: Sequence) -> list[int]:
        """The speech tokens given to the flow for ``seq`` so far (all pieces; CosyVoice3's
        capped silences left out), as the official ``tts_speech_token_dict`` holds them."""
        st = self._states.get(seq.id)
        if st is None:
            return []
        return st.spoken + (st.stream.tokens if st.stream is not None else [])

    def capture_graphs(self, config: EngineConfig) -> None:
        """The LM step's graphs now; CosyVoice3's DiT gets its per-shape graphs as shapes come
        (:mod:`.flow_graphs`). CosyVoice2's flow stays eager: its graphs were never measured."""
        super().capture_graphs(config)
        if isinstance(self.flow, FlowV3):
            self.flow.graphed = GraphedEstimator(self.flow.estimator)

    def start(self, seqs: list[Sequence]) -> None:
        """Nothing to set up here: a request's stream is made with its sequence and per piece."""

    # ---- the step -------------------------------------------------------------------------
    def decode(self, seqs: list[Sequence]) -> StepResult:
        """One token per sequence: per-row sampling from the carried log-probabilities, the
        flow (batched over the rows with a chunk due) and the vocoder per row, then the LM step
        over the rows that go on."""
        states = [self._states[s.id] for s in seqs]
        tokens = sample_batch(
            torch.stack([st.logp for st in states]).cpu(),
            [st.decoded for st in states],
            [s.generator for s in seqs],
            [len(st.decoded) < st.piece.min_len for st in states],
            self.params,
        )
        n = len(seqs)
        out = StepResult([_EMPTY] * n, [False] * n)
        ended = []  # the piece's LM run stopped (stop id or max_len)
        for seq, st, tok in zip(seqs, states, tokens, strict=True):
            if tok in self.stop_ids:
                ended.append(True)
                continue
            st.decoded.append(tok)
            seq.ids.append(SPEECH + tok)
            seq.patches.append(None)
            st.stream.push(tok)
            ended.append(len(st.decoded) >= st.piece.max_len)
        self._audio(states, ended, out)
        go_on = []
        for i, (seq, st) in enumerate(zip(seqs, states, strict=True)):
            if out.error[i]:
                continue
            if not ended[i]:
                go_on.append(i)
            elif st.index + 1 == len(st.pieces):
                out.done[i] = True
            else:
                self._next_piece(seq, st)
                out.next_part[i] = True
        if go_on:
            self._advance([seqs[i] for i in go_on], [tokens[i] for i in go_on])
        return out

    def _audio(self, states: list[_State], ended: list[bool], out: StepResult) -> None:
        """Every flow call due this step (chunks, then the rest of the pieces that ended) in
        batched rounds, and each row's vocoder; a row that fails gets its line in ``out``."""
        pieces: list[list[np.ndarray]] = [[] for _ in states]
        final_left = list(ended)
        while True:
            rows, work = [], []
            for i, st in enumerate(states):
                if out.error[i]:
                    continue
                if st.stream.due():
                    job = st.stream.job(final=False)
                elif final_left[i]:
                    final_left[i] = False
                    job = st.stream.job(final=True)
                else:
                    continue
                if job is not None:
                    rows.append(i)
                    work.append((st.stream, job))
            if not work:
                break
            for i, result in zip(rows, self.vocode_jobs(work), strict=True):
                if isinstance(result, str):
                    out.error[i] = result
                else:
                    pieces[i].append(result)
        for i, got in enumerate(pieces):
            if got and not out.error[i]:
                out.audio[i] = np.concatenate(got) if len(got) > 1 else got[0]

    def vocode_jobs(self, work: list[tuple[cvstream.TokenStream, cvstream.FlowJob]]) -> list:
        """Audio (or a plain line) per job: one batched flow call per kind of job; when the
        batch fails, each job alone, so only the request at fault fails. A padded, masked batch
        equals each row alone (test_rows_due_together_share_the_flow: each row within 1e-3 of its
        golden, both families)."""
        try:
            mels = cvstream.run_flow(self.flow, work)
        except Exception:  # noqa: BLE001 - find the row at fault
            if len(work) == 1:
                log.exception("CosyVoice flow failed")
                return [FAILED]
            return [r for item in work for r in self.vocode_jobs([item])]
        results = []
        for (stream, job), mel in zip(work, mels, strict=True):
            try:
                results.append(stream.take(job, mel))
            except VoxDeskError as exc:
                results.append(str(exc))
            except Exception:  # noqa: BLE001 - this request fails, the batch goes on
                log.exception("CosyVoice vocoder failed")
                results.append(FAILED)
        return results

    def _next_piece(self, seq: Sequence, st: _State) -> None:
        """Put the next piece's prefix in ``seq``'s positions (the engine prefills it again)."""
        st.spoken += st.stream.tokens
        st.index += 1
        ids = prefix_ids(st.piece)
        seq.next_part(ids, [None] * len(ids))
        seq.max_patches = st.piece.max_len
        self._begin_piece(seq, st)


_EMPTY = np.zeros(0, np.float32)


def flow_dtype(family: str, device: torch.device, lm_dtype: torch.dtype) -> torch.dtype:
    """CosyVoice3's flow on a GPU runs in the LM's half precision when one was chosen, as the
    official ``fp16`` mode halves the LM and the flow but not the vocoder: the first streamed
    chunk's ten DiT passes are then bound by half-precision, not float32, GEMMs
    (docs/benchmarks.md). Float32 otherwise: CosyVoice2's flow in half was never measured, and
    on the CPU half precision is VoxDesk's automatic choice for the LM, not the user's."""
    if family == "cosyvoice3" and device.type == "cuda" and lm_dtype in (torch.float16, torch.bfloat16):
        return lm_dtype
    return torch.float32


def load(
    config: EngineConfig,
    device: torch.device,
    dtype: str | None,
    progress: Callable[[float, str], None],
) -> CosyVoiceRunner:
    """The family's factory (app/models/__init__.py): the folder checked, the yaml read as
    data, the weights loaded with ``weights_only``. The LM runs in ``dtype`` (float32 when None),
    the flow as :func:`flow_dtype` says, the vocoder in float32."""
    folder = check_folder(config.model_dir)
    cfg = load_config(folder.yaml)
    progress(0.1, "Loading the language model")
    lm_dtype = getattr(torch, dtype) if dtype else torch.float32
    lm = CosyLM.from_config(cfg, folder.tokenizer_dir)
    lm.load(load_pt(folder.llm), folder.llm)
    progress(0.3, "Loading the flow")
    flow = (FlowV2 if folder.family == "cosyvoice2" else FlowV3).from_config(cfg)
    flow.load(load_pt(folder.flow))
    progress(0.4, "Loading the vocoder")
    hift = HiFT.from_config(cfg)
    hift.load(load_pt(folder.hift))
    progress(0.5, "Loading the frontend")
    frontend = Frontend(folder, cfg)
    tokenizer = CosyTokenizer(folder.tokenizer_dir, folder.family)
    progress(0.6, "Loading text normalization")
    prepare_text()
    lm = lm.to(device=device, dtype=lm_dtype).eval()
    flow = flow.to(device=device, dtype=flow_dtype(folder.family, device, lm_dtype)).eval()
    hift = hift.to(device).eval()
    params = SamplingParams.from_config(cfg)
    return CosyVoiceRunner(config, folder.family, lm, flow, hift, frontend, tokenizer, params, device)
