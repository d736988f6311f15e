"""Goldens of IndexTTS-2.5's prompt audio path: what the official code makes of a voice clip.

Usage (the official code's venv, from this repository's root)::

    /tmp/indexvenv/bin/python tools/indextts_golden_prompt.py CHECKOUT FOLDER OUT_DIR

CHECKOUT is an index-tts checkout (tools/indextts_official.py names the commit), FOLDER a tiny
folder written by ``python -m app.models.indextts.checkpoint FOLDER``. Writes
``OUT_DIR/prompt_feats.npz`` (tests/data/indextts/README.md lists its arrays). Each value comes
from the official functions and classes, called as ``infer_v2_5.py`` calls them:
``IndexTTS2._load_and_cut_audio`` (librosa), torchaudio's ``Resample``, ``kaldi.fbank``,
``CAMPPlus`` loaded from ``hf_cache/campplus_cn_common.bin``, ``mel_spectrogram`` with the
settings of the folder's ``config.yaml``, ``SeamlessM4TFeatureExtractor`` + ``Wav2Vec2BertModel``
and ``IndexTTS2.get_emb`` with the stats. The clips are synthesised by :func:`prompt_clip`
(numpy only, so the tests make the same samples) and written as 16-bit WAV files.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from types import SimpleNamespace

import numpy as np

# name -> (sample rate, seconds, channels, seed, what is kept: "features" adds w2v-BERT's,
# "tails" keeps only the ends of each array, where the 15 s cut falls)
CASES = {
    "mono24k": (24000, 3.0, 1, 1, "features"),
    "stereo44k": (44100, 1.5, 2, 2, "signals"),
    "long16k": (16000, 16.5, 1, 3, "tails"),  # 16 kHz: the emotion path is the identity
}
AUDIO_STEP = 9  # samples kept of the resampled clips (every 9th), frames of the fbank and mel (every 3rd)
FRAME_STEP = 3
FEAT_FRAMES, FEAT_CHANNELS = 8, 4  # w2v-BERT features: every 8th frame, every 4th channel
TAIL = 256  # the last samples of each clip, where the 15 s cut falls
RNG_SEED = 1234  # torch.manual_seed before one get_emb, then torch.rand(4): LayerDrop's draws


def prompt_clip(rate: int, seconds: float, channels: int, seed: int) -> np.ndarray:
    """A voice-like clip as int16 [n, channels]: syllables of a gliding harmonic tone (a different
    pitch per channel) with a noise burst before each, and a short silence."""
    rng = np.random.default_rng(seed)
    n = int(round(rate * seconds))
    t = np.arange(n) / rate
    out = np.zeros((n, channels))
    for c in range(channels):
        f0 = (120 + 30 * c) * (1 + 0.15 * np.sin(2 * np.pi * (0.7 + 0.2 * c) * t))
        phase = 2 * np.pi * np.cumsum(f0) / rate
        voiced = sum(np.sin(k * phase) / k for k in range(1, 12))
        syllable = np.sin(np.pi * np.clip((t % 0.3) / 0.25, 0, 1)) ** 2  # 0.25 s on, 0.05 s off
        burst = ((t % 0.3) > 0.25) * rng.standard_normal(n) * 0.08
        out[:, c] = 0.3 * syllable * voiced + burst + 0.003 * rng.standard_normal(n)
    return np.round(np.clip(out, -1, 1) * 32767).astype(np.int16)


def _sub(x, frames: int = 1, channels: int = 1) -> np.ndarray:
    """Every ``frames``-th frame (last axis but one for 2-D+, the only axis for 1-D)."""
    x = np.asarray(x.detach().cpu().numpy() if hasattr(x, "detach") else x, dtype=np.float32)
    return x[::frames] if x.ndim == 1 else x[..., ::frames, ::channels]


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print(__doc__)
        return 2
    checkout, folder, out_dir = argv[0], Path(argv[1]), Path(argv[2])
    sys.path.insert(0, str(Path(__file__).parent))
    from indextts_official import load_tree, official_import, save_npz

    official_import(checkout)
    import soundfile
    import torch
    import torchaudio
    from indextts.infer_v2_5 import IndexTTS2
    from indextts.s2mel.modules.audio import mel_spectrogram
    from indextts.s2mel.modules.campplus.DTDNN import CAMPPlus
    from transformers import SeamlessM4TFeatureExtractor, Wav2Vec2BertModel

    cfg = load_tree(folder)
    spect = cfg.s2mel["preprocess_params"]["spect_params"]
    mel_args = {  # infer_v2_5.py 256-265: fmax stays None only for the string "None"
        "n_fft": spect["n_fft"], "win_size": spect["win_length"], "hop_size": spect["hop_length"],
        "num_mels": spect["n_mels"], "sampling_rate": cfg.s2mel["preprocess_params"]["sr"],
        "fmin": spect.get("fmin", 0), "fmax": None if spect.get("fmax", "None") == "None" else 8000,
        "center": False,
    }  # fmt: skip
    campplus = CAMPPlus(feat_dim=80, embedding_size=192)
    campplus.load_state_dict(torch.load(folder / "hf_cache" / "campplus_cn_common.bin", map_location="cpu"))
    campplus.eval()
    w2v = folder / "hf_cache" / "w2v-bert-2.0"
    extract = SeamlessM4TFeatureExtractor.from_pretrained(str(w2v), local_files_only=True)
    stats = torch.load(folder / cfg.w2v_stat)
    model = Wav2Vec2BertModel.from_pretrained(str(w2v), local_files_only=True).eval()
    tts = SimpleNamespace(semantic_model=model, semantic_mean=stats["mean"],
                          semantic_std=torch.sqrt(stats["var"]))  # fmt: skip

    def emb(audio: torch.Tensor) -> torch.Tensor:
        inputs = extract(audio, sampling_rate=16000, return_tensors="pt")
        return IndexTTS2.get_emb(tts, inputs["input_features"], inputs["attention_mask"])

    arrays: dict[str, object] = {}
    with tempfile.TemporaryDirectory() as tmp, torch.no_grad():
        for name, (rate, seconds, channels, seed, kept) in CASES.items():
            path = str(Path(tmp) / f"{name}.wav")
            soundfile.write(path, prompt_clip(rate, seconds, channels, seed), rate, subtype="PCM_16")
            audio, sr = IndexTTS2._load_and_cut_audio(None, path, 15)  # as infer_v2_5.py 627-629
            audio_22k = torchaudio.transforms.Resample(sr, 22050)(audio)
            audio_16k = torchaudio.transforms.Resample(sr, 16000)(audio)
            emo_16k, _ = IndexTTS2._load_and_cut_audio(None, path, 15, sr=16000)
            fbank = torchaudio.compliance.kaldi.fbank(audio_16k, num_mel_bins=80, dither=0,
                                                      sample_frequency=16000)  # fmt: skip
            fbank = fbank - fbank.mean(dim=0, keepdim=True)
            ref_mel = mel_spectrogram(audio_22k.float(), **mel_args)
            got = {"audio_22k": audio_22k[0], "audio_16k": audio_16k[0], "emo_16k": emo_16k[0]}
            for key, value in got.items():
                arrays[f"{name}/{key}_tail"] = _sub(value[-TAIL:])
                arrays[f"{name}/{key}_len"] = np.int64(value.shape[-1])
                if kept != "tails":
                    arrays[f"{name}/{key}"] = _sub(value, AUDIO_STEP)
            mel_frames = ref_mel.transpose(1, 2)[0]  # [T, 80]
            for key, value in (("fbank", fbank), ("ref_mel", mel_frames)):
                arrays[f"{name}/{key}_tail"] = _sub(value[-TAIL // 32 :])
                arrays[f"{name}/{key}_shape"] = np.array(value.shape)
                if kept != "tails":
                    arrays[f"{name}/{key}"] = _sub(value, FRAME_STEP)
            arrays[f"{name}/style"] = campplus(fbank.unsqueeze(0))
            if kept == "features":
                for key, clip in (("spk_cond_emb", audio_16k), ("emo_cond_emb", emo_16k)):
                    feat = emb(clip)
                    arrays[f"{name}/{key}"] = _sub(feat, FEAT_FRAMES, FEAT_CHANNELS)
                    arrays[f"{name}/{key}_shape"] = np.array(feat.shape)
                torch.manual_seed(RNG_SEED)
                emb(audio_16k)
                arrays["rng_after_get_emb"] = torch.rand(4)
    arrays["layers"] = np.int64(tts.semantic_model.config.num_hidden_layers)
    path = save_npz(out_dir / "prompt_feats.npz", **{k.replace("/", "__"): v for k, v in arrays.items()})
    print(f"wrote {path} ({path.stat().st_size / 1e3:.0f} KB, {len(arrays)} arrays)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
