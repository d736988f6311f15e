"""Goldens of IndexTTS's S2Mel DiT estimator and CFM solver, from the official code on a tiny folder.

    cd CHECKOUT && /tmp/indexvenv/bin/python /path/to/voxdesk/tools/indextts_golden_dit.py \\
        CHECKOUT FOLDER OUT_DIR

Runs in the official code's venv (tools/indextts_official_requirements.txt). FOLDER is a tiny folder
written by ``python -m app.models.indextts.checkpoint FOLDER --preset indextts25-tiny`` (seed 0);
the official ``MyModel(cfg.s2mel)`` is built from its config.yaml and filled from its s2mel.pth by
the official ``load_checkpoint2``, as ``infer_v2_5.py`` does (every ``net.cfm`` key must match: the
script stops otherwise). Writes ``OUT_DIR/dit_cfm.npz``:

- ``est_*``: one estimator call as the solver makes it, two rows (a conditioned row and one whose
  prompt, style and condition are zero), each with its own ``t``: ``est_x``, ``est_prompt_x``,
  ``est_lens`` (= T), ``est_t``, ``est_style``, ``est_cond`` → ``est_v``;
- ``cfm_*``: a full ``CFM.inference`` as ``infer_v2_5.py`` calls it (25 steps, guidance 0.7) for
  T = 30 prompt frames + 50 generated: ``cfm_cond`` [1, T, C], ``cfm_ref_mel`` [1, 80, 30],
  ``cfm_style``, ``torch.manual_seed(cfm_seed)`` right before it → ``cfm_vc_target`` [1, 80, T];
- ``deep_*``: the same inference by a deeper DiT than the tiny preset's (``deep_depth`` blocks, so
  U-ViT skips are both pushed and taken; a WaveNet of ``deep_wavenet_layers`` with dilation rate
  ``deep_dilation``) whose weights are drawn from ``numpy.random.default_rng(deep_weight_seed)``
  key by key in the order ``deep_keys`` / ``deep_shapes`` (the test draws the same) →
  ``deep_vc_target``.
"""

from __future__ import annotations

import argparse
import copy
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from indextts_official import load_tree, official_import, save_npz  # noqa: E402

PROMPT, GEN = 30, 50
SEED = 1234
DEEP = {"depth": 5, "wavenet_layers": 3, "dilation": 2, "weight_seed": 7}


def deep_scale(key: str, shape: tuple[int, ...]) -> tuple[float, float]:
    """(mean, std) of the deep model's random tensor ``key``: norms and weight-norm gains near 1,
    biases small, weights ~ 1/sqrt(fan-in). The test uses the same rule."""
    if key.endswith((".weight_g", "norm.weight")):
        return 1.0, 0.1
    if len(shape) == 1:
        return 0.0, 0.02
    return 0.0, float(np.prod(shape[1:])) ** -0.5


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("checkout")
    parser.add_argument("folder", type=Path)
    parser.add_argument("out_dir", type=Path)
    args = parser.parse_args()
    official_import(args.checkout)
    import torch
    from indextts.s2mel.modules.commons import MyModel, load_checkpoint2
    from indextts.s2mel.modules.flow_matching import CFM
    from omegaconf import OmegaConf

    tree = load_tree(args.folder)
    model = MyModel(tree.s2mel)
    path = args.folder / tree.s2mel_checkpoint
    stored = torch.load(str(path), map_location="cpu", weights_only=True)["net"]["cfm"]
    if set(stored) != set(model.models["cfm"].state_dict()):
        sys.exit(f"error: {path}'s net.cfm keys differ from the official CFM's")
    model, *_ = load_checkpoint2(model, None, str(path), load_only_params=True)
    cfm = model.models["cfm"].eval()
    cfm.estimator.setup_caches(max_batch_size=1, max_seq_length=8192)

    frames, mels = PROMPT + GEN, tree.s2mel.DiT.in_channels
    content, style_dim = tree.s2mel.DiT.content_dim, tree.s2mel.style_encoder.dim
    gen = torch.Generator().manual_seed(SEED)
    x = torch.randn(2, mels, frames, generator=gen)
    prompt_x = torch.zeros(2, mels, frames)
    prompt_x[0, :, :PROMPT] = torch.randn(mels, PROMPT, generator=gen) - 4
    style = torch.cat([torch.randn(1, style_dim, generator=gen), torch.zeros(1, style_dim)])
    cond = torch.cat([torch.randn(1, frames, content, generator=gen), torch.zeros(1, frames, content)])
    t, lens = torch.tensor([0.04, 0.52]), torch.tensor([frames])
    with torch.inference_mode():
        v = cfm.estimator(x, prompt_x, lens, t, style, cond)

    ref_mel = torch.randn(1, mels, PROMPT, generator=gen) - 4
    cfm_cond = torch.randn(1, frames, content, generator=gen)
    cfm_style = torch.randn(1, style_dim, generator=gen)

    def inference(flow: torch.nn.Module) -> torch.Tensor:
        torch.manual_seed(SEED)
        return flow.inference(cfm_cond.clone(), torch.LongTensor([frames]), ref_mel, cfm_style, None, 25,
                              inference_cfg_rate=0.7)  # fmt: skip

    vc_target = inference(cfm)

    deep_tree = OmegaConf.create(OmegaConf.to_container(tree.s2mel))
    deep_tree.DiT.depth = DEEP["depth"]
    deep_tree.wavenet.num_layers, deep_tree.wavenet.dilation_rate = DEEP["wavenet_layers"], DEEP["dilation"]
    deep = CFM(deep_tree).eval()
    deep.estimator.setup_caches(max_batch_size=1, max_seq_length=8192)
    rng = np.random.default_rng(DEEP["weight_seed"])
    keys, shapes, state = [], [], copy.copy(deep.state_dict())
    for key, value in deep.named_parameters():
        mean, std = deep_scale(key, tuple(value.shape))
        state[key] = torch.from_numpy(rng.normal(mean, std, tuple(value.shape)).astype(np.float32))
        keys.append(key)
        shapes.append(",".join(str(n) for n in value.shape))
    deep.load_state_dict(state, strict=True)
    deep_target = inference(deep)

    out = save_npz(
        args.out_dir / "dit_cfm.npz",
        est_x=x, est_prompt_x=prompt_x, est_lens=lens, est_t=t, est_style=style, est_cond=cond, est_v=v,
        cfm_cond=cfm_cond, cfm_ref_mel=ref_mel, cfm_style=cfm_style, cfm_seed=np.array(SEED),
        cfm_vc_target=vc_target,
        deep_depth=np.array(DEEP["depth"]), deep_wavenet_layers=np.array(DEEP["wavenet_layers"]),
        deep_dilation=np.array(DEEP["dilation"]), deep_weight_seed=np.array(DEEP["weight_seed"]),
        deep_keys=np.array(keys), deep_shapes=np.array(shapes), deep_vc_target=deep_target,
    )  # fmt: skip
    print(f"{out} ({out.stat().st_size // 1024} KB): |v| max {v.abs().max():.3f}, "
          f"|vc_target| max {vc_target.abs().max():.3f}, deep {deep_target.abs().max():.3f}")  # fmt: skip


if __name__ == "__main__":
    main()
