"""IndexTTS's GPT and beam sampling give the official mel codes on the tiny folder.

The golden (tests/data/indextts/gpt_codes.npz, tools/indextts_golden_gpt.py) holds the official
``inference_speech`` codes for seven cases (texts and settings) x seeds 1..4, with
``torch.manual_seed(seed)`` right before each call; nothing else draws from torch's generator in
between, so a request generator seeded alike must give the same codes. It also holds the
official GPT-2 stack's output over one prompt and the first 20 steps of one beam search (codes,
parents, scores).
"""

import json
from pathlib import Path

import numpy as np
import pytest
import torch
from tiny_indextts import tiny_ix  # noqa: F401

from app.engine.attention import PagedKVCache, batch_context
from app.errors import VoxDeskError
from app.models.indextts.beam import BeamParams, BeamState
from app.models.indextts.checkpoint import official_shapes
from app.models.indextts.config import load_config
from app.models.indextts.gpt import EMOTION_KEYS, ContiguousKV, UnifiedGPT, generate, mel_position
from app.models.indextts.presets import PRESETS
from app.models.indextts.weights import load_torch, state_of

GOLD = np.load(Path(__file__).parent / "data" / "indextts" / "gpt_codes.npz")
CASES = ("plain", "drops", "short", "long", "limit", "penalty", "wide")
SEEDS = (1, 2, 3, 4)


@pytest.fixture(scope="module", autouse=True)
def one_thread():
    """The tiny GPT's ops are too small to split: a second thread only adds waits (many on a busy
    machine). The codes do not depend on it."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="module")
def tiny(tiny_ix: Path) -> tuple[dict, dict]:  # noqa: F811
    cfg = load_config(tiny_ix)
    path = tiny_ix / cfg.gpt_checkpoint
    return cfg.gpt, state_of(load_torch(path), "model", path)


@pytest.fixture(scope="module")
def model(tiny) -> UnifiedGPT:
    section, weights = tiny
    gpt = UnifiedGPT.from_config(section)
    gpt.load(weights)
    return gpt.eval()


def cond_of(model: UnifiedGPT) -> torch.Tensor:
    with torch.inference_mode():
        return model.conditioning(torch.from_numpy(GOLD["style"]), torch.from_numpy(GOLD["emovec"]))


def case(name: str) -> tuple[list[int], int, BeamParams]:
    params = BeamParams(**json.loads(str(GOLD[f"{name}_settings"])))
    return GOLD[f"{name}_text"].tolist(), int(GOLD[f"{name}_lang"]), params


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("name", CASES)
def test_codes_equal_the_official_for_every_seed(model, name: str, seed: int) -> None:
    ids, lang, params = case(name)
    trace: list = []
    codes = generate(model, cond_of(model), ids, lang, params, torch.Generator().manual_seed(seed), trace)
    assert codes == GOLD[f"{name}_seed{seed}"].tolist()
    assert len(trace) == int(GOLD[f"{name}_steps{seed}"])  # the search ran as many steps


def test_the_goldens_cover_early_stop_and_max_length() -> None:
    """Some 80-step runs end by the scorer (enough finished hypotheses that no beam can beat),
    some run to the limit and keep an open beam of ``max_mel_tokens`` codes (no stop code);
    ``limit`` runs its 6 steps; ``penalty`` and ``wide`` change every other setting."""
    runs = [(n, s, case(n)[2].max_mel_tokens) for n in CASES for s in SEEDS]
    early = [r for r in runs if int(GOLD[f"{r[0]}_steps{r[1]}"]) < r[2]]
    full = [r for r in runs if len(GOLD[f"{r[0]}_seed{r[1]}"]) == r[2]]
    assert len(early) >= 3 and len(full) >= 3
    assert any(n != "limit" for n, _, _ in full)
    assert all(int(GOLD[f"limit_steps{s}"]) == 6 for s in SEEDS)
    assert case("penalty")[2].length_penalty == 1.0 and case("wide")[2].num_beams == 4


def test_hidden_states_and_logits_equal_the_official_forward(model) -> None:
    """The prompt's first forward, on a paged cache with a shuffled block table and on the
    contiguous one: the stack's output within 1e-5 of the official (its masked padding rows
    left out), the last row's mel logits too."""
    ids, lang, _ = case("plain")
    expected = torch.from_numpy(GOLD["hidden"])
    spec, bs = model.kv_spec(), 4
    with torch.inference_mode():
        prompt = model.prompt(cond_of(model), ids, lang)
        n = len(prompt)
        kv = PagedKVCache(spec.num_layers, 8, bs, spec.num_kv_heads, spec.head_dim, torch.float32, "cpu")
        kv.context, _ = batch_context([[5, 2, 7, 0]], [0], [n], n, bs, kv.scratch_block)
        paged = model(prompt[None], kv)[0]
        plain = model(prompt[None], ContiguousKV(model.layers))[0]
        logits = model.logits(paged[-1])
    assert paged.shape == expected.shape
    torch.testing.assert_close(paged, expected, atol=1e-5, rtol=0)
    torch.testing.assert_close(plain, expected, atol=1e-5, rtol=0)
    torch.testing.assert_close(logits, torch.from_numpy(GOLD["logits"]), atol=1e-5, rtol=0)


def test_cached_steps_equal_a_full_forward(model) -> None:
    """Prefill then one code a step on the paged cache = the whole sequence at once."""
    ids, lang, _ = case("short")
    codes = [5, 900, 17, 5]
    spec, bs = model.kv_spec(), 4
    with torch.inference_mode():
        prompt = model.prompt(cond_of(model), ids, lang)
        steps = model.mel_embeds(torch.tensor(codes), torch.tensor([mel_position(i) for i in range(4)]))
        whole = torch.cat([prompt, steps])
        expected = model(whole[None], ContiguousKV(model.layers))[0]
        kv = PagedKVCache(spec.num_layers, 6, bs, spec.num_kv_heads, spec.head_dim, torch.float32, "cpu")
        table, n = [3, 1, 4, 0], len(prompt)
        kv.context, _ = batch_context([table], [0], [n], n, bs, kv.scratch_block)
        got = [model(prompt[None], kv)[0]]
        for i in range(len(codes)):
            kv.context, _ = batch_context([table], [n + i], [1], 1, bs, kv.scratch_block)
            got.append(model(steps[None, i : i + 1], kv)[0])
    torch.testing.assert_close(torch.cat(got), expected, atol=1e-5, rtol=0)


def test_trace_of_the_first_steps_equals_the_official(model) -> None:
    ids, lang, params = case("plain")
    trace: list = []
    generate(model, cond_of(model), ids, lang, params, torch.Generator().manual_seed(1), trace)
    steps = len(GOLD["trace_tokens"])
    assert steps == 20
    assert [t for t, _, _ in trace[:steps]] == GOLD["trace_tokens"].tolist()
    assert [p for _, p, _ in trace[:steps]] == GOLD["trace_parents"].tolist()
    scores = torch.tensor([s for _, _, s in trace[:steps]])
    torch.testing.assert_close(scores, torch.from_numpy(GOLD["trace_scores"]), atol=1e-4, rtol=1e-6)


def test_text_ids_0_and_1_are_dropped(model) -> None:
    """The official prepare_gpt_inputs drops start/stop text ids (0, 1) wherever they are."""
    with torch.inference_mode():
        dropped = model.text_embeds([0, 640, 1, 1, 77, 0, 1500, 1], 0)
        clean = model.text_embeds([640, 77, 1500], 0)
    assert dropped.shape == (5, model.dim)
    torch.testing.assert_close(dropped, clean, atol=0, rtol=0)
    assert GOLD["drops_seed1"].size > 0  # and the codes of that case match (test above)


def test_conditioning_rows(model) -> None:
    style, emovec = torch.randn(1, 192), torch.randn(1, model.dim)
    with torch.inference_mode():
        rows = model.conditioning(style, emovec)
        expected = model.spk_emb_proj(style)[0] + emovec[0]
    assert rows.shape == (3, model.dim) and not rows[1:].any()
    torch.testing.assert_close(rows[0], expected)


def paged_generate(model: UnifiedGPT, requests: list[tuple], params: BeamParams) -> list[list[int]]:
    """Requests ``(cond, ids, lang, generator)`` decoded together on one paged cache, each beam a
    row with its own blocks. Each prompt is prefilled once (the first beam's row; the first step
    takes its one row of logits); a beam that continues another gets a copy of its blocks (the
    engine shares them instead). Requests leave the batch when their search ends."""
    n, bs, spec = params.num_beams, 4, model.kv_spec()
    prompts = [model.prompt(c, ids, lang) for c, ids, lang, _ in requests]
    per_row = -(-(max(len(p) for p in prompts) + params.max_mel_tokens + 1) // bs)
    rows = len(requests) * n
    kv = PagedKVCache(spec.num_layers, rows * per_row, bs, spec.num_kv_heads, spec.head_dim, torch.float32,
                      "cpu")  # fmt: skip
    tables = [list(range(r * per_row, (r + 1) * per_row))[::-1] for r in range(rows)]  # not in order
    states = [BeamState(params, [1, model.start_mel], g, model.stop_mel) for *_, g in requests]
    lengths = [len(p) for p in prompts for _ in range(n)]
    width = max(lengths)
    x = torch.zeros(len(requests), width, model.dim)
    for q, p in enumerate(prompts):
        x[q, : len(p)] = p
    leaders = [tables[q * n] for q in range(len(requests))]
    kv.context, _ = batch_context(leaders, [0] * len(requests), lengths[::n], width, bs, kv.scratch_block)
    out = model(x, kv)
    hidden = {q * n: out[q, len(p) - 1][None] for q, p in enumerate(prompts)}
    results: dict[int, list[int]] = {}
    while len(results) < len(requests):
        live = [q for q in range(len(requests)) if q not in results]
        inputs, positions, live_rows = [], [], []
        for q in live:
            state = states[q]
            first = state.steps == 0
            rows_out = hidden[q * n] if first else torch.stack([hidden[q * n + b] for b in range(n)])
            tokens, parents = state.step(model.logits(rows_out))
            if state.done:
                results[q] = state.best()
                continue
            src = [tables[q * n + (0 if first else p)] for p in parents]
            k, v = kv.k[:, src].clone(), kv.v[:, src].clone()
            for b in range(n):
                kv.k[:, tables[q * n + b]], kv.v[:, tables[q * n + b]] = k[:, b], v[:, b]
            inputs += tokens
            positions += [mel_position(state.steps - 1)] * n
            live_rows += [q * n + b for b in range(n)]
        if not live_rows:
            break
        starts = [lengths[r] for r in live_rows]
        kv.context, _ = batch_context([tables[r] for r in live_rows], starts, [1] * len(live_rows), 1, bs,
                                      kv.scratch_block)  # fmt: skip
        out = model(model.mel_embeds(torch.tensor(inputs), torch.tensor(positions))[:, None], kv)
        for i, r in enumerate(live_rows):
            hidden[r] = out[i, 0]
            lengths[r] += 1
    return [results[q] for q in range(len(requests))]


def test_a_batch_on_the_paged_cache_gives_each_request_its_codes(model) -> None:
    """Three requests of different prompt lengths and seeds decoded together (beams as rows of
    one paged cache, ending at different steps) give each its own official codes."""
    picks = [("long", 2), ("short", 1), ("drops", 3)]
    assert len({int(GOLD[f"{n}_steps{s}"]) for n, s in picks}) == 3
    cond = cond_of(model)
    requests = []
    for name, seed in picks:
        ids, lang, _ = case(name)
        requests.append((cond, ids, lang, torch.Generator().manual_seed(seed)))
    with torch.inference_mode():
        got = paged_generate(model, requests, case("long")[2])
    assert got == [GOLD[f"{name}_seed{seed}"].tolist() for name, seed in picks]


def test_load_is_strict_except_the_emotion_encoder(tiny) -> None:
    section, weights = tiny
    assert any(k.startswith("emo_perceiver_encoder.") for k in weights)  # in gpt.pth, emotion.py's
    model = UnifiedGPT.from_config(section)
    model.load(weights)
    missing = {k: v for k, v in weights.items() if k != "mel_head.bias"}
    with pytest.raises(VoxDeskError, match="mel_head.bias is missing"):
        model.load(missing)
    with pytest.raises(VoxDeskError, match="speed_emb.weight is not part"):
        model.load({**weights, "speed_emb.weight": torch.zeros(2, model.dim)})
    bad = {**weights, "mel_head.weight": torch.zeros(3, model.dim)}
    with pytest.raises(VoxDeskError, match=r"mel_head.weight has shape \[3, 32\]"):
        model.load(bad)


def test_bad_lengths_and_params_are_one_line(model) -> None:
    with pytest.raises(VoxDeskError, match="at most 600"):
        model.text_embeds(list(range(2, 603)), 0)
    with pytest.raises(VoxDeskError, match="Text token 2401 is outside"):
        model.text_embeds([5, 2401], 0)
    with pytest.raises(VoxDeskError, match="Language index"):
        model.text_embeds([5], 107)
    with pytest.raises(VoxDeskError, match="max_mel_tokens 2000"):
        generate(model, cond_of(model), [5], 0, BeamParams(max_mel_tokens=2000), None)
    for bad in ({"num_beams": 1}, {"temperature": 0.0}, {"top_p": 0.0}, {"top_k": -1}):
        with pytest.raises(VoxDeskError, match="IndexTTS sampling"):
            BeamParams(**bad)


def test_one_draw_per_step_consumes_the_generator_like_the_official() -> None:
    """Each step draws one ``multinomial(·, 2n)`` over the whole ``(1, n·V)`` row: the generator
    ends where one such draw leaves it, whatever the filters kept."""
    params = BeamParams(max_mel_tokens=3)
    logits = torch.randn(3, 50, generator=torch.Generator().manual_seed(0))
    mine, ref = torch.Generator().manual_seed(9), torch.Generator().manual_seed(9)
    state = BeamState(params, [1, 48], mine, stop_token=49)
    state.step(logits)
    torch.multinomial(torch.ones(1, 150), 6, generator=ref)
    assert torch.equal(mine.get_state(), ref.get_state())
    state.step(logits)
    state.step(logits)
    assert state.done and state.steps == 3 and len(state.best()) == 3
    # the first step may take the prompt's one row: the same draw as n equal rows
    one, many = (BeamState(params, [1, 48], torch.Generator().manual_seed(3), stop_token=49) for _ in "ab")
    assert one.step(logits[:1]) == many.step(logits[:1].expand(3, -1))
    assert torch.equal(one.scores, many.scores)
    with pytest.raises(RuntimeError):
        state.step(logits)


def test_a_stop_code_ends_hypotheses_and_the_best_is_cut_there() -> None:
    """When the stop code dominates, three hypotheses end at once and the search is done."""
    logits = torch.zeros(3, 10)
    logits[:, 9] = 30.0  # stop
    logits[0, 4] = 29.0
    state = BeamState(BeamParams(), [1, 8], torch.Generator().manual_seed(0), stop_token=9)
    state.step(logits)  # only beam 0 is live: one stop hypothesis (no codes), beams continue
    assert not state.done
    for _ in range(4):
        if state.done:
            break
        state.step(logits)
    assert state.done and state.steps < 5
    assert state.best() == []  # the empty hypothesis scores highest (length_penalty 0)


@pytest.mark.parametrize("name", ["indextts25-tiny", "indextts25"])
def test_parameters_are_the_official_keys_and_shapes(name: str) -> None:
    """Every official UnifiedVoice key (official_shapes.json) but the emotion encoder's and the
    training-only text head is ours, same shape; the released shapes are built on the meta device."""
    entry = official_shapes(name)
    with torch.device("meta"):
        model = UnifiedGPT.from_config(PRESETS[name]["gpt"])
    ours = {k: list(v.shape) for k, v in model.state_dict().items()}
    official = {k: v for k, v in entry["gpt"].items() if not k.startswith(EMOTION_KEYS + ("text_head.",))}
    assert ours == official
