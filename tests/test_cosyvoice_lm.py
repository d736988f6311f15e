"""CosyVoice's LM on paged attention and its sampling give the official tokens.

The goldens (tests/data/cosyvoice/) hold the official LM's tokens for every mode of both families
on the tiny folders, with the seed set by ``set_all_random_seed`` right before the call; nothing
draws from torch's generator between the seed and the LM (the frontend draws nothing), so a
request's own generator seeded alike must give the same tokens. The goldens' ``input_*`` arrays
were recorded from the frontend's zero-shot step, which cross-lingual and instruct2 call before
they delete the LM's prompt speech tokens: those two modes run the LM without them.
"""

import json
from pathlib import Path

import numpy as np
import pytest
import torch

from app.engine.attention import PagedKVCache, batch_context
from app.errors import VoxDeskError
from app.models.cosyvoice.checkpoint import write_checkpoint
from app.models.cosyvoice.config import load_config
from app.models.cosyvoice.lm import CosyLM, qwen_config
from app.models.cosyvoice.lm_loop import LMRequest, generate
from app.models.cosyvoice.sampling import SamplingParams, length_bounds, sample_batch, sample_row
from app.models.voxcpm.minicpm import pack_projections

DATA = Path(__file__).parent / "data" / "cosyvoice"
MODES = ("zero_shot", "cross_lingual", "instruct2", "speed", "stream")
SILENT = {1, 2, 28, 29, 55, 248, 494, 2241, 2242, 2322, 2323}  # model.py: CosyVoice3's silent tokens


@pytest.fixture(scope="module", params=["cosyvoice2", "cosyvoice3"])
def family(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory):
    name = request.param
    torch.set_num_threads(2)
    root = write_checkpoint(tmp_path_factory.mktemp(name), f"{name}-tiny", seed=0)
    cfg = load_config(root / f"{name}.yaml")
    lm = CosyLM.from_config(cfg, root / "CosyVoice-BlankEN")
    lm.load(torch.load(root / "llm.pt", weights_only=True))
    return name, root, cfg, lm.eval()


def golden_request(name: str, mode: str) -> tuple[LMRequest, list[int]]:
    entry = json.loads((DATA / f"{name}.json").read_text(encoding="utf-8"))["modes"][mode]
    data = np.load(DATA / f"{name}_{mode}.npz")
    text = torch.from_numpy(data["input_text"][0]).long()
    prompt_text = torch.from_numpy(data["input_prompt_text"][0]).long()
    speech = torch.from_numpy(data["input_llm_prompt_speech_token"][0]).long()
    if entry["call"] != "zero_shot":  # frontend_cross_lingual / _instruct2 drop them for the LM
        speech = speech[:0]
    generator = torch.Generator().manual_seed(entry.get("seed", 1234))
    return LMRequest(torch.cat([prompt_text, text]), len(text), speech, generator), data["tokens"].tolist()


def silent_run(tokens: list[int]) -> int:
    longest = run = 0
    for t in tokens:
        run = run + 1 if t in SILENT else 0
        longest = max(longest, run)
    return longest


@pytest.mark.parametrize("mode", MODES)
def test_every_mode_gives_the_official_tokens(family, mode: str) -> None:
    name, _, cfg, lm = family
    request, expected = golden_request(name, mode)
    tokens = generate(lm, [request], SamplingParams.from_config(cfg))[0]
    # the goldens hold llm_job's output, which drops CosyVoice3's silent tokens past 5 in a row;
    # none of these runs has such a run, so the LM's raw sequence is that output
    assert silent_run(tokens) <= 5
    assert tokens == expected


def test_a_batch_gives_each_request_its_own_tokens(family) -> None:
    """Three requests of different lengths (prefix and output) and seeds in one batched loop."""
    name, _, cfg, lm = family
    pairs = [golden_request(name, mode) for mode in ("stream", "cross_lingual", "instruct2")]
    assert len({len(r.text_ids) + len(r.prompt_speech) for r, _ in pairs}) == 3
    tokens = generate(lm, [r for r, _ in pairs], SamplingParams.from_config(cfg))
    assert tokens == [expected for _, expected in pairs]


def test_hidden_states_equal_transformers_qwen2(family) -> None:
    """Prefill then single steps on the paged cache = transformers' Qwen2 over the whole input."""
    from transformers import Qwen2ForCausalLM

    name, root, _, lm = family
    ref = Qwen2ForCausalLM.from_pretrained(root / "CosyVoice-BlankEN", torch_dtype=torch.float32).eval()
    request, tokens = golden_request(name, "zero_shot")
    prefix = lm.prefix_embeds(request.text_ids, request.prompt_speech)
    x = torch.cat([prefix, lm.speech_embeds(torch.tensor(tokens[:4]))])
    with torch.inference_mode():
        expected = ref(inputs_embeds=x[None], output_hidden_states=True).hidden_states[-1][0]
        spec, n, bs = lm.kv_spec(), len(prefix), 8
        kv = PagedKVCache(spec.num_layers, 12, bs, spec.num_kv_heads, spec.head_dim, torch.float32, "cpu")
        table = [7, 2, 9, 0, 11, 5, 3, 10, 4, 1, 6]  # not in order: the block table is honoured
        kv.context, pos = batch_context([table], [0], [n], n, bs, kv.scratch_block)
        got = [lm(x[None, :n], pos, kv)[0]]
        for i in range(n, len(x)):
            kv.context, pos = batch_context([table], [i], [1], 1, bs, kv.scratch_block)
            got.append(lm(x[None, i : i + 1], pos, kv)[0])
    torch.testing.assert_close(torch.cat(got), expected, atol=1e-5, rtol=0)


def test_packed_projections_keep_the_output(family) -> None:
    """The runner packs q/k/v (with their biases) and gate/up on CUDA: same numbers."""
    import copy

    _, _, _, lm = family
    packed = copy.deepcopy(lm)
    pack_projections(packed)
    assert packed.llm.layers[0].self_attn.qkv_proj.bias is not None
    x = torch.randn(2, 5, lm.qwen.hidden_size, generator=torch.Generator().manual_seed(1))
    spec = lm.kv_spec()
    outs = []
    with torch.inference_mode():
        for model in (lm, packed):
            kv = PagedKVCache(spec.num_layers, 4, 4, spec.num_kv_heads, spec.head_dim, torch.float32, "cpu")
            kv.context, pos = batch_context([[0, 1], [2]], [0, 0], [5, 3], 5, 4, kv.scratch_block)
            outs.append(model(x, pos, kv))
    torch.testing.assert_close(outs[0][0], outs[1][0], atol=1e-5, rtol=0)
    torch.testing.assert_close(outs[0][1, :3], outs[1][1, :3], atol=1e-5, rtol=0)
    assert "llm.model.model.layers.0.self_attn.q_proj.bias" in packed.official_names().values()


def test_layout_constants_per_family(family) -> None:
    name, _, _, lm = family
    if name == "cosyvoice2":
        assert (lm.sos, lm.task_id, lm.eos) == (0, 1, 6561) and lm.stop_ids == {6561, 6562, 6563}
        assert lm.llm_decoder.bias is not None and lm.llm_embedding.weight.shape[0] == 2
    else:
        assert (lm.sos, lm.task_id, lm.eos) == (6561, 6563, 6562) and lm.stop_ids == set(range(6561, 6761))
        assert lm.llm_decoder.bias is None and not hasattr(lm, "llm_embedding")
        with pytest.raises(VoxDeskError, match="endofprompt"):
            lm.prefix_embeds(torch.tensor([5, 6]), torch.tensor([1]))
    prefix = lm.prefix_embeds(torch.tensor([5, 151646, 6]), torch.tensor([3, 4]))
    rows = lm.llm_embedding.weight if name == "cosyvoice2" else lm.speech_embedding.weight
    assert prefix.shape == (7, lm.qwen.hidden_size)
    assert torch.equal(prefix[0], rows[lm.sos]) and torch.equal(prefix[4], rows[lm.task_id])
    assert torch.equal(prefix[5:], lm.speech_embedding.weight[[3, 4]])
    assert lm.kv_spec().num_layers == 2 and lm.kv_spec().head_dim == 8


def test_llm_pt_is_loaded_strictly(family) -> None:
    name, root, cfg, _ = family
    sd = torch.load(root / "llm.pt", weights_only=True)
    lm = CosyLM.from_config(cfg, root / "CosyVoice-BlankEN")
    del sd["llm.model.lm_head.weight"]  # the unused text head may be left out
    lm.load(sd)
    sd["speech_embedding.weight"] = sd["speech_embedding.weight"][:-1]
    with pytest.raises(VoxDeskError, match="llm.pt: tensor 'speech_embedding.weight' has shape"):
        lm.load(sd)
    del sd["llm.model.model.norm.weight"]
    with pytest.raises(VoxDeskError, match="llm.pt lacks tensor.*llm.model.model.norm.weight"):
        lm.load(sd)
    with torch.device("meta"):  # a meta-built LM takes the tensors as they are, rotary rebuilt
        meta = CosyLM.from_config(cfg, root / "CosyVoice-BlankEN")
    meta.load(torch.load(root / "llm.pt", weights_only=True))
    assert not any(t.is_meta for t in [*meta.parameters(), *meta.buffers()])


def test_bad_qwen_config_is_one_line() -> None:
    good = {"hidden_size": 32, "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 64,
            "num_hidden_layers": 2, "rms_norm_eps": 1e-6, "max_position_embeddings": 64,
            "vocab_size": 10}  # fmt: skip
    assert qwen_config(good).qkv_bias and qwen_config(good).rope_scale == 1.0
    for bad in ({**good, "num_key_value_heads": 3}, {**good, "rope_scaling": {"type": "yarn"}},
                {k: v for k, v in good.items() if k != "hidden_size"}):  # fmt: skip
        with pytest.raises(VoxDeskError, match="not a Qwen2 config"):
            qwen_config(bad)


# ---- sampling -------------------------------------------------------------------------------
PARAMS = SamplingParams()


def test_length_bounds_count_the_spoken_text() -> None:
    assert length_bounds(3) == (6, 60) and PARAMS.length_bounds(0) == (0, 0)


def test_batch_equals_rows() -> None:
    gen = torch.Generator().manual_seed(5)
    logp = (torch.randn(4, 6564, generator=gen) * 3).log_softmax(-1)
    logp[1, 6561] = 5.0  # row 1 would take the masked id
    decoded = [[], [1, 2], list(range(30)), []]
    ignore = [False, True, False, True]
    # row 2: its nucleus choice is in the window -> the full-row fallback draws too
    top = int(logp[2].argmax())
    logp[2, top] = 20.0
    decoded[2][-1] = top
    rows = [sample_row(logp[b].clone(), decoded[b], torch.Generator().manual_seed(b), ignore[b], PARAMS)
            for b in range(4)]  # fmt: skip
    gens = [torch.Generator().manual_seed(b) for b in range(4)]
    assert sample_batch(logp, decoded, gens, ignore, PARAMS) == rows
    assert rows[1] != 6561 and rows[2] != top


def test_ignore_eos_masks_only_speech_token_size() -> None:
    logp = torch.full((6761,), -30.0)
    logp[6561] = logp[6562] = 0.0  # CosyVoice3: sos 6561 (what is masked) and eos 6562
    gen = torch.Generator().manual_seed(0)
    picks = {sample_row(logp, [], gen, True, PARAMS) for _ in range(20)}
    assert picks == {6562}
    picks = {sample_row(logp, [], gen, False, PARAMS) for _ in range(40)}
    assert picks == {6561, 6562}


def test_nucleus_is_top_k_of_a_stable_sort() -> None:
    """A flat row: ties sort by id, so only the first top_k ids can come out."""
    gen = torch.Generator().manual_seed(0)
    picks = {sample_row(torch.zeros(6564), [], gen, False, PARAMS) for _ in range(300)}
    assert picks <= set(range(25)) and len(picks) > 15


def test_repeats_fall_back_to_the_whole_row() -> None:
    logp = torch.full((6564,), -50.0)
    logp[7] = 0.0
    logp[9] = -3.0
    gen = torch.Generator().manual_seed(0)
    assert sample_row(logp, [1, 2, 3], gen, False, PARAMS) == 7
    assert sample_row(logp, [7] + [1] * 9, gen, False, PARAMS) == 9  # 7 within the last 10
    assert sample_row(logp, [7] + [1] * 10, gen, False, PARAMS) == 7  # 7 just left the window


def test_same_seed_same_draws_other_seed_other_draws() -> None:
    logp = (torch.randn(6564, generator=torch.Generator().manual_seed(2)) * 2).log_softmax(-1)

    def run(seed: int) -> list[int]:
        gen, out = torch.Generator().manual_seed(seed), []
        for _ in range(30):
            out.append(sample_row(logp, out, gen, False, PARAMS))
        return out

    assert run(3) == run(3) != run(4)
