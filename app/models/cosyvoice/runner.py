"""CosyVoice2 / Fun-CosyVoice3 behind the engine's :class:`~app.engine.family.FamilyRunner`.

A request becomes one LM run per piece of its normalized text (the official
``text_normalize(split=True)``), spoken in order into one audio stream: when a piece's LM stops,
its :class:`~.stream.TokenStream` finishes, the sequence's positions are replaced by the next
piece's prefix (:meth:`Sequence.next_part`) and ``StepResult.next_part`` tells the engine to
free its blocks and prefill it again, keeping the stream, chunk numbering and stats.

Positions: a piece's LM prefix (:mod:`.plan`: mode, pieces, ids) then the generated speech
tokens, all in ``Sequence.ids`` in one id space, so the prefix cache hashes them. The decode
step (speech embedding → Qwen2 over the paged KV → head) reads and writes static rows, which
:class:`~app.engine.cuda_graphs.CudaGraphs` captures per batch bucket on CUDA; sampling, the
flow and the vocoder run eagerly per row after it.

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

from app.engine.attention import AttnContext, PagedKVCache
from app.engine.config import EngineConfig
from app.engine.cuda_graphs import CudaGraphs
from app.engine.family import FamilyInfo, FamilyRunner, KVSpec, StepResult
from app.engine.request import SynthRequest
from app.engine.sequence import Sequence
from app.engine.voice import VoicePrompt
from app.errors import VoxDeskError
from app.models.cosyvoice import stream as cvstream
from app.models.cosyvoice.config import load_config
from app.models.cosyvoice.flow_v2 import FlowV2
from app.models.cosyvoice.flow_v3 import FlowV3
from app.models.cosyvoice.frontend import Frontend
from app.models.cosyvoice.hift import HiFT
from app.models.cosyvoice.lm import CosyLM, batch_context
from app.models.cosyvoice.plan import (
    SPEECH,
    Piece,
    check_request,
    plan_pieces,
    prefix_ids,
    request_streams,
)
from app.models.cosyvoice.sampling import SamplingParams, sample_batch
from app.models.cosyvoice.tokenizer import CosyTokenizer
from app.models.cosyvoice.voice import NO_VOICE, Features, VoiceFeatureCache, with_features
from app.models.cosyvoice.weights import check_folder, load_pt

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


class CosyVoiceRunner(FamilyRunner):
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

    # ---- memory ---------------------------------------------------------------------------
    def kv_specs(self) -> list[KVSpec]:
        return [self.lm.kv_spec()]

    def bind_kv(self, num_blocks: int, block_size: int, attention: str) -> None:
        spec = self.lm.kv_spec()
        self.block_size = block_size
        self.kv = PagedKVCache(
            spec.num_layers, num_blocks, block_size, spec.num_kv_heads, spec.head_dim,
            self.dtype, self.device, backend=attention,
        )  # fmt: skip
        # the decode step's static inputs and output, one row per request (CUDA graphs read them)
        n, dev, scratch = self.config.max_num_seqs, self.device, self.kv.scratch_block
        self.max_blocks = -(-self.max_model_len // block_size)
        self.s_tok = torch.zeros(n, dtype=torch.long, device=dev)
        self.s_pos = torch.zeros(n, dtype=torch.long, device=dev)
        self.s_slots = torch.full((n,), scratch * block_size, dtype=torch.long, device=dev)
        self.s_tables = torch.full((n, self.max_blocks), scratch, dtype=torch.long, device=dev)
        self.s_lens = torch.ones(n, dtype=torch.int32, device=dev)
        self.s_logp = torch.zeros(n, self.lm.llm_decoder.out_features, dtype=torch.float32, device=dev)

    def capture_graphs(self, config: EngineConfig) -> None:
        """The LM decode step (speech embedding, Qwen2 over the paged KV, the head) per batch
        bucket; sampling and the flow stay eager."""
        CudaGraphs(self, config.max_num_seqs, 0, prefill=False).capture()

    def pad_rows(self, n: int, bs: int) -> None:
        """Static rows ``[n:bs]`` read and write only the scratch block (CudaGraphs' hook)."""
        if bs > n:
            scratch = self.kv.scratch_block
            self.s_tok[n:bs] = 0
            self.s_pos[n:bs] = 0
            self.s_slots[n:bs] = scratch * self.block_size
            self.s_lens[n:bs] = 1
            self.s_tables[n:bs] = scratch

    def step_core(self, n: int, variant: int, width: int) -> None:
        """The LM over static rows ``[:n]``: each row's token at its position → ``s_logp``."""
        del variant  # one kind of step: no per-row setting changes the graph
        self.kv.context = AttnContext(
            self.s_slots[:n], self.s_tables[:n, :width], self.s_pos[:n], self.s_lens[:n]
        )
        e = self.lm.speech_embeds(self.s_tok[:n])[:, None].to(self.dtype)
        h = self.lm.forward(e, self.s_pos[:n, None], self.kv)
        self.s_logp[:n] = self.lm.logp(h[:, 0])

    # ---- requests -------------------------------------------------------------------------
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
            self.family, self.flow, self.hift, state.voice, state.streaming, state.speed, state.hop, gen
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

    # ---- the LM ---------------------------------------------------------------------------
    def _embeds(self, seq: Sequence, state: _State, start: int) -> torch.Tensor:
        """Input embeddings ``[len(seq) - start, H]`` of positions ``start..``."""
        n_pre = seq.num_prompt
        parts = []
        if start < n_pre:
            parts.append(state.prefix[start:])
        gen = [i - SPEECH for i in seq.ids[max(start, n_pre) :]]
        if gen:
            parts.append(self.lm.speech_embeds(torch.tensor(gen, dtype=torch.long, device=self.device)))
        return torch.cat(parts).to(self.dtype)

    @torch.inference_mode()
    def prefill(self, seqs: list[Sequence]) -> None:
        """KV for each sequence's new positions; the next token's log-probabilities are its carry."""
        starts = [s.num_computed for s in seqs]
        news = [len(s) - st for s, st in zip(seqs, starts, strict=True)]
        width = max(news)
        embeds = []
        for seq, start in zip(seqs, starts, strict=True):
            e = self._embeds(seq, self._states[seq.id], start)
            embeds.append(torch.nn.functional.pad(e, (0, 0, 0, width - e.shape[0])))
        h = self._run_lm(seqs, starts, news, torch.stack(embeds))
        logp = self.lm.logp(h[torch.arange(len(seqs)), torch.tensor(news) - 1])
        for row, seq in enumerate(seqs):
            self._states[seq.id].logp = logp[row]
            seq.num_computed = len(seq)

    def _run_lm(
        self, seqs: list[Sequence], starts: list[int], counts: list[int], embeds: torch.Tensor
    ) -> torch.Tensor:
        """The Qwen2 stack over ``embeds [B, L, H]``: row ``b`` adds ``counts[b]`` positions from
        ``starts[b]`` to its paged KV."""
        ctx, positions = batch_context(
            [s.block_table for s in seqs], starts, counts, embeds.shape[1], self.block_size,
            self.kv.scratch_block, self.device,
        )  # fmt: skip
        self.kv.context = ctx
        return self.lm.forward(embeds, positions, self.kv)

    def start(self, seqs: list[Sequence]) -> None:
        """Nothing to set up here: a request's stream is made with its sequence and per piece."""

    @torch.inference_mode()
    def _advance(self, seqs: list[Sequence], tokens: list[int]) -> None:
        """The LM over each sequence's newest position (its sampled token): the static rows are
        filled, then the captured graph of the step replays, or the step runs eagerly."""
        n, bs = len(seqs), self.block_size
        width = max(len(s.block_table) for s in seqs)
        tables = torch.full((n, width), self.kv.scratch_block, dtype=torch.long)
        pos = [len(s) - 1 for s in seqs]
        for row, seq in enumerate(seqs):
            tables[row, : len(seq.block_table)] = torch.tensor(seq.block_table)
        dev = self.device
        self.s_tok[:n] = torch.tensor(tokens, device=dev)
        self.s_pos[:n] = torch.tensor(pos, device=dev)
        self.s_slots[:n] = torch.tensor(
            [s.block_table[p // bs] * bs + p % bs for s, p in zip(seqs, pos, strict=True)], device=dev
        )
        self.s_lens[:n] = self.s_pos[:n].to(torch.int32) + 1
        self.s_tables[:n, :width] = tables.to(dev)
        self.s_tables[:n, width:] = self.kv.scratch_block
        if self.graphs is not None and self.graphs.covers(n):
            self.graphs.replay(n)
        else:
            self.step_core(n, 0, width)
        logp = self.s_logp[:n].clone()
        for row, seq in enumerate(seqs):
            self._states[seq.id].logp = logp[row]
            seq.num_computed = len(seq)

    # ---- the step -------------------------------------------------------------------------
    def decode(self, seqs: list[Sequence]) -> StepResult:
        """One token per sequence: a batched head + per-row sampling, then per row the token
        stream (flow and vocoder when a chunk is due), then the LM over the new tokens."""
        states = [self._states[s.id] for s in seqs]
        logp = torch.stack([st.logp for st in states]).cpu()
        tokens = sample_batch(
            logp,
            [st.decoded for st in states],
            [s.generator for s in seqs],
            [len(st.decoded) < st.piece.min_len for st in states],
            self.params,
        )
        n = len(seqs)
        out = StepResult([_EMPTY] * n, [False] * n)
        go_on: list[int] = []
        for i, (seq, st, tok) in enumerate(zip(seqs, states, tokens, strict=True)):
            try:
                audio, more = self._take(seq, st, int(tok))
            except VoxDeskError as exc:
                out.error[i] = str(exc)
                continue
            except Exception:  # noqa: BLE001 - this request fails, the batch goes on
                log.exception("CosyVoice decode of request %d failed", seq.id)
                out.error[i] = FAILED
                continue
            out.audio[i] = audio
            if more == "token":
                go_on.append(i)
            elif more == "piece":
                out.next_part[i] = True
            else:
                out.done[i] = True
        if go_on:
            self._advance([seqs[i] for i in go_on], [tokens[i] for i in go_on])
        return out

    def _take(self, seq: Sequence, st: _State, tok: int) -> tuple[np.ndarray, str]:
        """Apply one sampled token: ("token": the LM goes on, "piece": the next piece was put in
        place, "done": the request ended), with the audio it completed."""
        piece_end = tok in self.stop_ids
        audio = _EMPTY
        if not piece_end:
            st.decoded.append(tok)
            seq.ids.append(SPEECH + tok)
            seq.patches.append(None)
            audio = st.stream.push(tok)
            piece_end = len(st.decoded) >= st.piece.max_len
        if not piece_end:
            return audio, "token"
        tail = st.stream.finish()
        audio = np.concatenate([audio, tail]) if len(audio) else tail
        if st.index + 1 == len(st.pieces):
            return audio, "done"
        st.spoken += st.stream.tokens
        st.index += 1
        ids = prefix_ids(st.piece)
        seq.next_part(ids, [None] * len(ids))
        seq.max_patches = st.piece.max_len
        self._begin_piece(seq, st)
        return audio, "piece"


_EMPTY = np.zeros(0, np.float32)


def load(
    config: EngineConfig,
    device: torch.device,
    dtype: str | None,
    progress: Callable[[float, str], None],
) -> CosyVoiceRunner:
    """The family's factory (app/models/__init__.py): the folder checked, the yaml read as
    data, the weights loaded with ``weights_only``. The LM runs in ``dtype`` (float32 when None);
    the flow and the vocoder stay float32."""
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
    lm = lm.to(device=device, dtype=lm_dtype).eval()
    flow = flow.to(device).eval()
    hift = hift.to(device).eval()
    params = SamplingParams.from_config(cfg)
    return CosyVoiceRunner(config, folder.family, lm, flow, hift, frontend, tokenizer, params, device)
