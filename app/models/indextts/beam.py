"""IndexTTS's beam sampling of mel codes, draw for draw the official one, per request.

The official ``inference_speech`` calls its vendored ``generate`` (transformers ~4.5x's
``_beam_sample``) with transformers 4.52.1's logits processors and ``BeamSearchScorer``. Each
step of one request, over its ``n`` beams (docs/indextts_plan.md §3):

1. log-softmax of each beam's logits (fp32);
2. repetition penalty over every id the beam has seen, which includes the fake prompt ids the
   official code feeds ``generate`` (``1`` and ``start_mel``): a seen score ``s`` becomes ``s * p``
   when negative, else ``s / p`` (log-probabilities: only an exact 0 takes that branch);
3. temperature, top-k and top-p, both keeping at least 2 ids (one more than the one eos id);
4. plus each beam's running score (``[0, -1e9, ...]`` at the start: the first draw sees beam 0);
5. softmax over the ``(1, n * V)`` row and ONE ``torch.multinomial(·, 2n)`` draw without
   replacement on the request's generator (the official draws on the global one: a generator
   seeded ``torch.manual_seed(N)``-alike gives the same codes on the CPU), sorted by score;
6. the scorer: in rank order, an eos candidate among the first ``n`` ends a hypothesis (score
   ``sum / len ** length_penalty``), later eos candidates are dropped, the first ``n`` other
   candidates become the next beams. The request is done when ``n`` hypotheses are kept and the
   worst of them is at least the step's best candidate score (``early_stopping=False``), or after
   ``max_mel_tokens`` steps, when the open beams join the hypotheses and the best one wins.

A state holds no KV and no model: a runner that must redo a request (preemption) starts a new
``BeamState`` on a generator restored to the state it had before the first step.

The draw consumes ``n * V`` exponentials of the generator per step, whatever the filters kept,
so the sampler always draws on the full row of a request, never on a filtered subset.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import torch

from app.errors import VoxDeskError

STOP_MEL = 8193  # UnifiedVoice's default stop_mel_token (= eos = pad in ``generate``)


@dataclass(frozen=True)
class BeamParams:
    """``infer``'s generation defaults (infer_v2_5.py 732-740); ``do_sample`` is always on."""

    num_beams: int = 3
    temperature: float = 0.8
    top_k: int = 30
    top_p: float = 0.8
    repetition_penalty: float = 10.0
    length_penalty: float = 0.0
    max_mel_tokens: int = 1500

    def __post_init__(self) -> None:
        checks = (
            (self.num_beams >= 2, "num_beams must be at least 2"),
            (self.temperature > 0, "temperature must be above 0"),
            (self.top_k >= 0, "top_k must be 0 (off) or more"),
            (0 < self.top_p <= 1, "top_p must be in (0, 1]"),
            (self.repetition_penalty > 0, "repetition_penalty must be above 0"),
            (self.max_mel_tokens >= 1, "max_mel_tokens must be at least 1"),
        )
        for ok, line in checks:
            if not ok:
                raise VoxDeskError(f"IndexTTS sampling: {line}; use a value in range.")


class BeamState:
    """The beams of one request: ``step`` takes their logits, draws, and says which beam each new
    beam continues. ``prompt_fake_ids``: the ids the official ``generate`` sees as the prompt
    (``[1] * prompt_len + [start_mel]``; only the set matters)."""

    def __init__(
        self,
        params: BeamParams,
        prompt_fake_ids: Iterable[int],
        generator: torch.Generator | None,
        stop_token: int = STOP_MEL,
    ) -> None:
        self.params = params
        self.generator = generator
        self.stop_token = stop_token
        n = params.num_beams
        fake = sorted(set(int(i) for i in prompt_fake_ids))
        self._prompt = len(fake)
        # every beam's seen ids: the fake prompt, then its codes (the official input_ids, deduplicated)
        self._seen = torch.tensor([fake] * n, dtype=torch.long)
        self.scores = torch.full((n,), -1e9, dtype=torch.float32)
        self.scores[0] = 0.0
        self.steps = 0
        self._hyps: list[tuple[float, list[int]]] = []
        self._worst = 1e9
        self._finished = False  # the scorer's own is_done (before max length)
        self.done = False

    def step(self, logits: torch.Tensor) -> tuple[list[int], list[int]]:
        """``logits [n, V]`` of the beams -> (the new code of each beam, the beam it continues).
        The first step may take the prompt's one row ``[1, V]``: the official code runs the prompt
        once per beam, n equal rows."""
        if self.done:
            raise RuntimeError("step() on a finished beam search")
        p, n = self.params, self.params.num_beams
        if self.steps == 0 and logits.shape[0] == 1:
            logits = logits.expand(n, -1)
        self._seen = self._seen.to(logits.device)  # the penalty reads it where the logits are
        scores = self._process(logits.float())
        vocab = scores.shape[-1]
        flat = (scores + self.scores.to(scores.device)[:, None]).view(1, n * vocab)
        probs = flat.softmax(dim=-1)
        picks = torch.multinomial(probs, 2 * n, generator=self.generator)
        picked = flat.gather(-1, picks)
        picked, order = torch.sort(picked, descending=True, dim=1)
        picks = picks.gather(-1, order)
        cand_scores, cand = picked[0].cpu(), picks[0].cpu()

        seen_before = self._seen
        new_scores, tokens, parents = [], [], []
        for rank in range(2 * n):
            parent, token = divmod(int(cand[rank]), vocab)
            if token == self.stop_token:
                if rank < n:  # a finished hypothesis; the eos itself is not part of it
                    self._add(seen_before[parent, self._prompt :].tolist(), cand_scores[rank].item(), 1)
                continue
            new_scores.append(cand_scores[rank])
            tokens.append(token)
            parents.append(parent)
            if len(tokens) == n:
                break
        if len(tokens) < n:  # cannot happen: one eos id gives at most n of the 2n candidates
            raise RuntimeError(f"beam search drew fewer than {n} continuations")
        self.scores = torch.stack(new_scores)
        column = torch.tensor(tokens, device=seen_before.device)[:, None]
        self._seen = torch.cat([seen_before[parents], column], dim=1)
        self.steps += 1
        if len(self._hyps) >= n:
            best = cand_scores[0].item() / float(self.steps) ** p.length_penalty
            self._finished = self._worst >= best
        if self._finished:
            self.done = True
        elif self.steps >= p.max_mel_tokens:
            for beam in range(n):  # the open beams join the hypotheses (``finalize``)
                codes = self._seen[beam, self._prompt :].tolist()
                self._add(codes, self.scores[beam].item(), 0)
            self.done = True
        return tokens, parents

    def best(self) -> list[int]:
        """The winning hypothesis' codes, cut at the first stop code (none: all of them)."""
        if not self.done:
            raise RuntimeError("best() before the beam search is done")
        # finalize sorts (stably) and pops the last: among equal scores the latest added wins
        codes = sorted(self._hyps, key=lambda h: h[0])[-1][1]
        return codes[: codes.index(self.stop_token)] if self.stop_token in codes else codes

    # ---- internals ----------------------------------------------------------------------
    def _process(self, scores: torch.Tensor) -> torch.Tensor:
        """The official processors, in the official order, on ``[n, V]`` fp32 logits."""
        p = self.params
        scores = scores.log_softmax(dim=-1)
        if p.repetition_penalty != 1.0:
            seen = self._seen
            got = scores.gather(1, seen)
            got = torch.where(got < 0, got * p.repetition_penalty, got / p.repetition_penalty)
            scores = scores.scatter(1, seen, got)
        if p.temperature != 1.0:
            scores = scores / p.temperature
        keep = 2  # min_tokens_to_keep: one eos id + 1
        if p.top_k != 0:
            k = min(max(p.top_k, keep), scores.shape[-1])
            scores = scores.masked_fill(scores < torch.topk(scores, k)[0][..., -1, None], -float("inf"))
        if p.top_p < 1.0:
            ordered, index = torch.sort(scores, descending=False)
            drop = ordered.softmax(dim=-1).cumsum(dim=-1) <= (1 - p.top_p)
            drop[..., -keep:] = False
            scores = scores.masked_fill(drop.scatter(1, index, drop), -float("inf"))
        return scores

    def _add(self, codes: list[int], total: float, extra_len: int) -> None:
        """``BeamHypotheses.add``: keep the ``n`` best; ``extra_len`` counts an ending eos."""
        n = self.params.num_beams
        score = total / float(len(codes) + extra_len) ** self.params.length_penalty
        if len(self._hyps) < n or score > self._worst:
            self._hyps.append((score, codes))
            if len(self._hyps) > n:
                ranked = sorted((s, i) for i, (s, _) in enumerate(self._hyps))
                del self._hyps[ranked[0][1]]
                self._worst = ranked[1][0]
            else:
                self._worst = min(score, self._worst)
