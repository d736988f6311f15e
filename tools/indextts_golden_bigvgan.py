"""Record what the official BigVGAN v2 makes of fixed random mels (tests/data/indextts/bigvgan.npz).

Runs in the official code's venv (tools/indextts_official_requirements.txt)::

    /tmp/indexvenv/bin/python tools/indextts_golden_bigvgan.py CHECKOUT FOLDER OUT_DIR

``FOLDER`` is a tiny IndexTTS folder (``python -m app.models.indextts.checkpoint FOLDER``); its
``hf_cache/bigvgan/`` is loaded as ``infer_v2_5.py`` loads it: ``BigVGAN.from_pretrained(dir)``,
``remove_weight_norm()``, ``eval()``; each mel goes through ``bigvgan(mel.float()).squeeze().unsqueeze(0)``
(the official call, before ``clamp(32767·wav)``). Written: ``mel_<T>`` [1, 80, T] and ``wav_<T>``
[1, 256·T] for T = 40 and 23 (``randn · 0.5 − 1`` from ``torch.Generator`` seeds 1 and 2: on
the tiny folder's random vocoder, whose output convolution has gain 0.1, under 1 % of the samples
reach the ±1 clamp; wider mels push more there, where a parity test sees nothing),
``state_abs_sum``: the sum of |values| of the file's generator table, so a test can tell a changed
folder writer from a changed vocoder, and ``kaiser_sinc``: the official 12-tap filter of the ×2
resamplers (``kaiser_sinc_filter1d(0.25, 0.3, 12)``), which the official modules compute at construction.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from indextts_official import official_import, save_npz  # noqa: E402

LENGTHS = {40: 1, 23: 2}  # mel frames -> generator seed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("checkout", help="the official index-tts checkout")
    ap.add_argument("folder", help="a tiny IndexTTS folder (app/models/indextts/checkpoint.py)")
    ap.add_argument("out_dir", help="where bigvgan.npz goes (tests/data/indextts)")
    args = ap.parse_args()
    official_import(args.checkout)
    import torch
    from indextts.s2mel.modules.bigvgan import bigvgan
    from indextts.s2mel.modules.bigvgan.alias_free_activation.torch.filter import kaiser_sinc_filter1d

    folder = Path(args.folder) / "hf_cache" / "bigvgan"
    model = bigvgan.BigVGAN.from_pretrained(str(folder), use_cuda_kernel=False)
    model.remove_weight_norm()
    model.eval()
    state = torch.load(folder / "bigvgan_generator.pt", map_location="cpu", weights_only=True)["generator"]
    arrays = {
        "state_abs_sum": torch.tensor(sum(v.double().abs().sum().item() for v in state.values())),
        "kaiser_sinc": kaiser_sinc_filter1d(0.25, 0.3, 12).flatten(),
    }
    for frames, seed in LENGTHS.items():
        gen = torch.Generator().manual_seed(seed)
        mel = torch.randn(1, 80, frames, generator=gen) * 0.5 - 1
        with torch.no_grad():
            wav = model(mel.float()).squeeze().unsqueeze(0)
        arrays[f"mel_{frames}"], arrays[f"wav_{frames}"] = mel, wav
        peak, std = wav.abs().max().item(), wav.std().item()
        print(f"T={frames}: wav {tuple(wav.shape)}, |max| {peak:.3f}, std {std:.3f}")
    out = save_npz(Path(args.out_dir) / "bigvgan.npz", **arrays)
    print(f"wrote {out} ({out.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
