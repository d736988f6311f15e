"""One LoRA training step on our modules equals the official trainer's step (CPU, fp32, tiny models).

Same initial LoRA weights (``lora_B`` made non-zero so the ``lora_A`` gradients are not trivially
zero), same packed samples, same seed: the losses, the LoRA gradients after clipping and the
weights after the AdamW step must agree. The official side is ``scripts/train_voxcpm_finetune.py``'s
step (OpenBMB/VoxCPM @ 616d3d3e): forward, ``sum(lambda * loss) / grad_accum`` backward per micro
batch, ``clip_grad_norm_(1.0)``, ``AdamW(lr, weight_decay=0.01)``.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
import torch
from official import import_official

from app.models.voxcpm.tokenizer import TextTokenizer
from app.models.voxcpm.weights import load_model
from app.train.forward import pack
from app.train.trainer import DataOrder, Trainer

R, ALPHA, LR = 4, 8, 1e-3
TEXTS = ["Hello world, this is a test.", "你好世界，今天天气很好。", "The quick brown fox.", "Good morning."]


def _official_packer():
    """``voxcpm.training.packers`` alone (the package's __init__ needs datasets/argbind)."""
    import voxcpm

    path = Path(voxcpm.__file__).parent / "training" / "packers.py"
    spec = importlib.util.spec_from_file_location("official_packers", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.AudioFeatureProcessingPacker


def _official_model(path: Path, v2: bool):
    import_official()
    if v2:
        from voxcpm.model.voxcpm2 import LoRAConfig
        from voxcpm.model.voxcpm2 import VoxCPM2Model as cls
    else:
        from voxcpm.model.voxcpm import LoRAConfig
        from voxcpm.model.voxcpm import VoxCPMModel as cls
    lora = LoRAConfig(enable_lm=True, enable_dit=True, enable_proj=False, r=R, alpha=ALPHA, dropout=0.0)
    model = cls.from_local(str(path), optimize=False, training=True, device="cpu", lora_config=lora)
    return model.float()


@pytest.mark.parametrize("arch", ["v2", "v1"])
def test_one_step_equals_the_official_step(arch, tiny_v1, tiny_v2):
    v2 = arch == "v2"
    path = tiny_v2 if v2 else tiny_v1
    ours = load_model(path, "cpu")
    tok = TextTokenizer(path)
    gen = torch.Generator().manual_seed(1)
    hop = ours.patch_size * ours.audio_vae.chunk_size
    waves = [0.1 * torch.randn(int(hop * n), generator=gen) for n in (9.5, 6, 12.2, 4)]
    with torch.no_grad():
        samples = [
            (tok(t), ours.encode_audio(w[None], "right")[0]) for t, w in zip(TEXTS, waves, strict=True)
        ]

    official = _official_model(path, v2)
    packer = _official_packer()(1, 4096, ours.patch_size, ours.feat_dim, official.audio_vae)
    vae = official.audio_vae
    del official.audio_vae  # the official script trains without it
    official.train()

    trainer = Trainer(ours, samples, steps=1, lr=LR, r=R, alpha=ALPHA, targets=("lm", "dit"),
                      batch_size=2, grad_accum=2, checkpointing=False, seed=3)  # fmt: skip
    theirs = dict(official.named_parameters())
    with torch.no_grad():
        for name, p in ours.named_parameters():
            if "lora_" in name:
                if name.endswith("lora_B"):
                    p.copy_(0.05 * torch.randn(p.shape, generator=gen))
                theirs[name].copy_(p)
    assert {n for n in theirs if "lora_" in n} == {n for n, _ in ours.named_parameters() if "lora_" in n}

    # The official packer on the same audio and text gives the batch we pack.
    order = DataOrder(len(samples), 2, 3)
    micro = [order.next() for _ in range(2)]
    batches = []
    for idx in micro:
        audio = torch.nn.utils.rnn.pad_sequence(
            [waves[i] for i in idx], batch_first=True, padding_value=-100.0
        )
        text = torch.nn.utils.rnn.pad_sequence([torch.tensor(samples[i][0]) for i in idx], batch_first=True,
                                               padding_value=-100).to(torch.int32)  # fmt: skip
        packer.audio_vae = vae
        got = packer(
            audio, text, torch.ones(2, dtype=torch.int32), torch.zeros(2, dtype=torch.int32), [False] * 2
        )
        mine = pack([samples[i] for i in idx])
        assert torch.equal(got["text_tokens"].long(), mine.tokens)
        assert torch.allclose(got["audio_feats"], mine.feats, atol=1e-5)
        for key, value in (("text_mask", mine.text_mask), ("audio_mask", mine.audio_mask),
                           ("loss_mask", mine.loss_mask), ("labels", mine.labels)):  # fmt: skip
            assert torch.equal(got[key].float(), value.float()), key
        batches.append(got)

    initial = {n: p.detach().clone() for n, p in official.named_parameters() if "lora_" in n}
    params = [p for n, p in official.named_parameters() if "lora_" in n]
    optimizer = torch.optim.AdamW(params, lr=LR, weight_decay=0.01)
    torch.manual_seed(1234)
    optimizer.zero_grad(set_to_none=True)
    official_losses = []
    for got in batches:
        out = official(got["text_tokens"], got["text_mask"], got["audio_feats"], got["audio_mask"],
                       got["loss_mask"], got["position_ids"], got["labels"], progress=0.0)  # fmt: skip
        loss = out["loss/diff"] * 1.0 + out["loss/stop"] * 1.0
        (loss / 2).backward()
        official_losses.append(float(loss.detach()))
    torch.nn.utils.clip_grad_norm_(official.parameters(), max_norm=1.0)
    optimizer.step()

    torch.manual_seed(1234)
    loss = trainer.step()
    assert loss == pytest.approx(sum(official_losses) / 2, rel=1e-5, abs=1e-6)
    mine = dict(ours.named_parameters())
    for name, p in theirs.items():
        if "lora_" not in name:
            continue
        assert torch.allclose(mine[name].grad, p.grad, rtol=1e-4, atol=1e-7), name
        # Adam's first step is lr * g / (|g| + eps): for a gradient within summation noise of 0 the
        # sign may differ, so the weights are compared where the gradient is clearly not 0.
        sure = p.grad.abs() > 1e-6
        assert torch.allclose(mine[name][sure], p[sure], rtol=0, atol=1e-7), name
        assert torch.allclose(mine[name], p, rtol=0, atol=2.01 * LR), name
    changed = max((mine[n].grad.abs().max().item()) for n in theirs if "lora_A" in n)
    moved = max((mine[n] - initial[n]).abs().max().item() for n in initial)
    assert changed > 1e-4 and moved > LR / 2  # the A gradients are real and the step moved the weights


def test_activation_checkpointing_changes_nothing(tiny_v2):
    """Recomputing each layer in the backward pass (the plan's choice on small cards) gives the
    same loss and LoRA gradients as keeping the activations."""
    grads = []
    for checkpointing in (False, True):
        model = load_model(tiny_v2, "cpu")
        tok = TextTokenizer(tiny_v2)
        gen = torch.Generator().manual_seed(0)
        samples = [(tok(t), torch.randn(8, model.patch_size, model.feat_dim, generator=gen)) for t in TEXTS]
        torch.manual_seed(0)
        trainer = Trainer(model, samples, steps=1, lr=LR, r=R, alpha=ALPHA, targets=("lm", "dit"),
                          batch_size=2, grad_accum=1, checkpointing=checkpointing, seed=0)  # fmt: skip
        with torch.no_grad():
            for p in trainer.params[1::2]:  # every lora_B, so every lora_A gets a gradient
                p.copy_(0.05 * torch.randn(p.shape, generator=gen))
        torch.manual_seed(7)
        loss = trainer.step()
        grads.append((loss, [p.grad.clone() for p in trainer.params]))
    (loss_a, a), (loss_b, b) = grads
    assert loss_a == pytest.approx(loss_b, rel=1e-6)
    assert all(torch.allclose(x, y, rtol=1e-5, atol=1e-8) for x, y in zip(a, b, strict=True))
