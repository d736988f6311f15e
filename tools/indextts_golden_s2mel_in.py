"""Record what the official IndexTTS-2.5 code makes of codes before the CFM: the codec's decode
and the length regulator (tests/data/indextts/codec_lr.npz).

Runs in the official code's venv (``/tmp/indexvenv/bin/python``), never VoxDesk's; it imports
nothing of VoxDesk but the shared helpers of tools/indextts_official.py::

    python tools/indextts_golden_s2mel_in.py CHECKOUT FOLDER OUT_DIR

``FOLDER`` is a tiny folder written by ``python -m app.models.indextts.checkpoint FOLDER``.
The modules are built and loaded as ``IndexTTS2.__init__`` does (``EnhancedCodec(**sc, cfg=sc)``
+ ``load_checkpoint(FOLDER/codec.pth)``; ``MyModel(cfg.s2mel)`` + ``load_checkpoint2``) and
called as ``infer`` calls them: ``S_infer = semantic_codec.decode(codes)``, ``target_lengths =
int(S_infer.shape[1] * 1.72 * duration_factor)``, ``length_regulator(S_infer, ylens=target_lengths,
n_quantizers=3, f0=None)[0]``, and the prompt condition from ``[1, T, 1024]`` features with
``ylens`` = the reference mel's frames.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from indextts_official import load_tree, official_import, save_npz  # noqa: E402

SEED = 2025
CODE_LENGTHS = (6, 11)  # two GPT outputs: S_infer has 2x as many frames
DURATION_FACTORS = (1.0, 0.75, 1.5)
PROMPT_FRAMES = 24  # w2v-BERT frames of the prompt features
PROMPT_YLENS = 41  # the reference mel's frames that go with them (about 1.72 per feature frame)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("checkout", type=Path, help="the official index-tts checkout")
    parser.add_argument("folder", type=Path, help="a tiny IndexTTS-2.5 folder")
    parser.add_argument("out", type=Path, help="where codec_lr.npz goes")
    args = parser.parse_args()
    official_import(args.checkout)
    import torch
    from indextts.codec.models import EnhancedCodec
    from indextts.s2mel.modules.commons import MyModel, load_checkpoint2

    cfg = load_tree(args.folder)
    codec = EnhancedCodec(**cfg.semantic_codec, cfg=cfg.semantic_codec)
    codec.load_checkpoint(str(args.folder / "codec.pth"))  # infer leaves it in training mode: no effect
    s2mel = MyModel(cfg.s2mel)
    s2mel, *_ = load_checkpoint2(s2mel, None, str(args.folder / cfg.s2mel_checkpoint), load_only_params=True,
                                 ignore_modules=[], is_distributed=False)  # fmt: skip
    s2mel.eval()
    regulator = s2mel.models["length_regulator"]

    gen = torch.Generator().manual_seed(SEED)
    arrays: dict[str, np.ndarray] = {}
    with torch.no_grad():
        for n in CODE_LENGTHS:
            codes = torch.randint(0, int(cfg.semantic_codec.codebook_size), (1, n), generator=gen)
            s_infer = codec.decode(codes)
            arrays[f"codes_{n}"] = codes.numpy()
            arrays[f"S_infer_{n}"] = s_infer.numpy()
            for factor in DURATION_FACTORS:
                target = torch.LongTensor([int(s_infer.shape[1] * 1.72 * factor)])
                cond = regulator(s_infer, ylens=target, n_quantizers=3, f0=None)[0]
                arrays[f"target_{n}_{factor}"] = target.numpy()
                arrays[f"cond_{n}_{factor}"] = cond.numpy()
        # fp16-representable values stored as fp16: half the bytes, the same float32 input
        feats = torch.randn(1, PROMPT_FRAMES, 1024, generator=gen).half().float()
        ylens = torch.LongTensor([PROMPT_YLENS])
        arrays["prompt_feats"] = feats.half().numpy()
        arrays["prompt_ylens"] = ylens.numpy()
        arrays["prompt_condition"] = regulator(feats, ylens=ylens, n_quantizers=3, f0=None)[0].numpy()
    arrays["duration_factors"] = np.array(DURATION_FACTORS)
    args.out.mkdir(parents=True, exist_ok=True)
    save_npz(args.out / "codec_lr.npz", **arrays)
    print(f"wrote {args.out / 'codec_lr.npz'}")


if __name__ == "__main__":
    main()
