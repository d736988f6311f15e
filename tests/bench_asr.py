"""Speech-recognition speed on this CPU, in × real time (audio seconds per compute second).

    python tests/bench_asr.py                      # SenseVoice Small at its real shapes, random weights
    python tests/bench_asr.py --model DIR          # a downloaded SenseVoice folder instead
    python tests/bench_asr.py --whisper small      # faster-whisper at Whisper-small shapes, side by side

The SenseVoice model is the SenseVoiceSmall encoder as sherpa-onnx's export has it (SAN-M:
1 + 49 + 20 blocks of width 512, 4 heads, FFN 2048, FSMN kernel 11, CTC over 25 055 tokens;
~234 M parameters) with random weights, exported to ONNX (fp32) and, when the ``onnxruntime``
package is importable, quantized to int8 exactly as sherpa-onnx does (``quantize_dynamic``,
MatMul, QUInt8) — that is the file VoxDesk downloads. It runs through VoxDesk's own
:class:`app.asr.sensevoice.SenseVoiceRecognizer`, i.e. sherpa-onnx's real feature extraction,
onnxruntime and CTC search. SenseVoice is non-autoregressive, so random weights cost exactly
what real ones do.

``--whisper`` needs ``ctranslate2``, ``faster-whisper`` and ``transformers`` (not VoxDesk
dependencies): a random Whisper of the named size is converted with CTranslate2's converter
(int8) and timed as faster-whisper runs it: 30 s log-mel window, encoder, then a decoder run of
``--tokens-per-second`` × audio seconds tokens (end-of-text suppressed: random weights would
stop anywhere), greedy and beam 5 (faster-whisper's default).
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

WHISPER = {  # d_model, encoder layers, decoder layers, heads, n_mels
    "base": (512, 6, 6, 8, 80),
    "small": (768, 12, 12, 12, 80),
    "medium": (1024, 24, 24, 16, 80),
    "large-v3-turbo": (1280, 32, 4, 20, 128),
}


def speech_like(seconds: float, rate: int = 16000, seed: int = 0) -> np.ndarray:
    """Not speech, but a loud signal with speech's rhythm (so nothing is skipped as silence)."""
    rng = np.random.default_rng(seed)
    t = np.arange(int(seconds * rate)) / rate
    f0 = 140 + 40 * np.sin(2 * np.pi * 0.7 * t)
    voiced = sum(np.sin(2 * np.pi * k * np.cumsum(f0) / rate) / k for k in range(1, 12))
    envelope = 0.5 + 0.5 * np.sin(2 * np.pi * 4 * t) ** 2
    return (0.2 * voiced * envelope + 0.01 * rng.standard_normal(len(t))).astype(np.float32)


def build_sensevoice(folder: Path, int8: bool) -> Path:
    import torch
    from torch import nn

    d, heads, ffn, kernel, vocab = 512, 4, 2048, 11, 25055

    class Block(nn.Module):
        def __init__(self, size_in: int) -> None:
            super().__init__()
            self.norm1, self.norm2 = nn.LayerNorm(size_in), nn.LayerNorm(d)
            self.qkv, self.out = nn.Linear(size_in, 3 * d), nn.Linear(d, d)
            self.fsmn = nn.Conv1d(d, d, kernel, padding=kernel // 2, groups=d, bias=False)
            self.w1, self.w2 = nn.Linear(d, ffn), nn.Linear(ffn, d)
            self.residual = size_in == d

        def forward(self, x):
            b, t, _ = x.shape
            q, k, v = self.qkv(self.norm1(x)).split(d, dim=-1)
            memory = self.fsmn(v.transpose(1, 2)).transpose(1, 2) + v
            q, k, v = (z.view(b, t, heads, d // heads).transpose(1, 2) for z in (q, k, v))
            att = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(d // heads), dim=-1) @ v
            att = self.out(att.transpose(1, 2).reshape(b, t, d)) + memory
            x = x + att if self.residual else att
            return x + self.w2(torch.relu(self.w1(self.norm2(x))))

    class SenseVoice(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.embed = nn.Embedding(16, 560)
            self.blocks = nn.Sequential(Block(560), *[Block(d) for _ in range(49)])
            self.after_norm = nn.LayerNorm(d)
            self.tp = nn.Sequential(*[Block(d) for _ in range(20)])
            self.tp_norm = nn.LayerNorm(d)
            self.ctc = nn.Linear(d, vocab)

        def forward(self, x, x_length, language, text_norm):
            b = x.shape[0]
            event = self.embed(torch.tensor([[1, 2]])).expand(b, 2, 560)
            valid = torch.arange(x.shape[1])[None, :] < x_length[:, None]  # padding mask, as the real one
            x = x * valid[..., None].to(x.dtype)
            x = torch.cat([self.embed(language)[:, None], event, self.embed(text_norm)[:, None], x], 1)
            x = self.after_norm(self.blocks(x * math.sqrt(d)))
            return self.ctc(self.tp_norm(self.tp(x)))

    torch.manual_seed(0)
    net = SenseVoice().eval()
    for p in net.parameters():
        p.data.mul_(0.3)
    fp32 = folder / "model.onnx"
    args = (torch.randn(1, 100, 560), torch.tensor([100], dtype=torch.int32),
            torch.tensor([0], dtype=torch.int32), torch.tensor([14], dtype=torch.int32))  # fmt: skip
    with torch.no_grad():
        torch.onnx.export(
            net, args, str(fp32), dynamo=False, opset_version=13,
            input_names=["x", "x_length", "language", "text_norm"], output_names=["logits"],
            dynamic_axes={"x": {0: "N", 1: "T"}, "x_length": {0: "N"}, "language": {0: "N"},
                          "text_norm": {0: "N"}, "logits": {0: "N", 1: "T"}},
        )  # fmt: skip
    import onnx

    model = onnx.load(str(fp32))
    meta = {
        "vocab_size": vocab, "lfr_window_size": 7, "lfr_window_shift": 6, "normalize_samples": 0,
        "neg_mean": ",".join(["-8"] * 560), "inv_stddev": ",".join(["0.25"] * 560),
        "lang_auto": 0, "lang_zh": 3, "lang_en": 4, "lang_yue": 7, "lang_ja": 11, "lang_ko": 12,
        "lang_nospeech": 13, "with_itn": 14, "without_itn": 15, "model_type": "sense_voice_ctc",
    }  # fmt: skip
    for key, value in meta.items():
        model.metadata_props.add(key=key, value=str(value))
    onnx.save(model, str(fp32))
    specials = ["<unk>", "<s>", "</s>", "<|zh|>", "<|en|>", "<|yue|>", "<|ja|>", "<|ko|>", "<|nospeech|>"]
    tokens = specials + [f"▁w{i}" for i in range(vocab - len(specials))]
    (folder / "tokens.txt").write_text("".join(f"{t} {i}\n" for i, t in enumerate(tokens)), encoding="utf-8")
    if not int8:
        return fp32
    from onnxruntime.quantization import QuantType, quantize_dynamic

    quantize_dynamic(str(fp32), str(folder / "model.int8.onnx"), op_types_to_quantize=["MatMul"],
                     weight_type=QuantType.QUInt8)  # fmt: skip
    q = onnx.load(str(folder / "model.int8.onnx"))
    if not any(p.key == "vocab_size" for p in q.metadata_props):
        for key, value in meta.items():
            q.metadata_props.add(key=key, value=str(value))
        onnx.save(q, str(folder / "model.int8.onnx"))
    fp32.unlink()
    return folder / "model.int8.onnx"


def bench_sensevoice(folder: Path, seconds: list[float], repeats: int, threads: int) -> None:
    from app.asr.sensevoice import SenseVoiceRecognizer, model_file

    t0 = time.perf_counter()
    rec = SenseVoiceRecognizer(folder, num_threads=threads)
    load = time.perf_counter() - t0
    name = model_file(folder).name
    size = model_file(folder).stat().st_size / 1e6
    print(f"SenseVoice ({name}, {size:.0f} MB) via sherpa-onnx, {threads} thread(s): load {load:.2f} s")
    for s in seconds:
        audio = speech_like(s)
        rec.transcribe(audio[:16000], 16000, "zh")  # warm-up
        best = cpu = math.inf
        for _ in range(repeats):
            t0, c0 = time.perf_counter(), time.process_time()
            rec.transcribe(audio, 16000, "zh")
            best, cpu = min(best, time.perf_counter() - t0), min(cpu, time.process_time() - c0)
        print(f"  {s:5.1f} s of audio: wall {best:6.3f} s -> {s / best:6.1f}x real time; "
              f"CPU {cpu:6.3f} s -> {s / cpu:6.1f}x per CPU-second")  # fmt: skip


def _whisper_vocabulary(folder: Path, size: int) -> None:
    """Give the converted model Whisper's special tokens at their real ids (no tokenizer here)."""
    import json

    tokens = [f"t{i}" for i in range(size)]
    specials = {50257: "<|endoftext|>", 50258: "<|startoftranscript|>", 50259: "<|en|>", 50260: "<|zh|>",
                50358: "<|translate|>", 50359: "<|transcribe|>", 50360: "<|startoflm|>",
                50361: "<|startofprev|>", 50362: "<|nocaptions|>", 50363: "<|notimestamps|>"}  # fmt: skip
    for i, token in specials.items():
        tokens[i] = token
    for i in range(50364, size):
        tokens[i] = f"<|{(i - 50364) * 0.02:.2f}|>"
    (folder / "vocabulary.json").write_text(json.dumps(tokens), encoding="utf-8")
    (folder / "vocabulary.txt").unlink(missing_ok=True)


def bench_whisper(size: str, seconds: list[float], repeats: int, threads: int, tps: float) -> None:
    import ctranslate2
    import torch
    from ctranslate2.converters import TransformersConverter
    from faster_whisper.feature_extractor import FeatureExtractor
    from transformers import WhisperConfig, WhisperForConditionalGeneration

    dm, enc, dec, heads, mels = WHISPER[size]
    with tempfile.TemporaryDirectory() as tmp:
        cfg = WhisperConfig(d_model=dm, encoder_layers=enc, decoder_layers=dec, encoder_attention_heads=heads,
                            decoder_attention_heads=heads, encoder_ffn_dim=4 * dm, decoder_ffn_dim=4 * dm,
                            num_mel_bins=mels, vocab_size=51866 if mels == 128 else 51865,
                            decoder_start_token_id=50258, bos_token_id=50257, eos_token_id=50257,
                            pad_token_id=50257)  # fmt: skip
        torch.manual_seed(0)
        WhisperForConditionalGeneration(cfg).save_pretrained(f"{tmp}/hf")
        TransformersConverter(f"{tmp}/hf").convert(f"{tmp}/ct2", quantization="int8")
        _whisper_vocabulary(Path(f"{tmp}/ct2"), cfg.vocab_size)
        model = ctranslate2.models.Whisper(f"{tmp}/ct2", device="cpu", compute_type="int8",
                                           intra_threads=threads)  # fmt: skip
        fe = FeatureExtractor(feature_size=mels)
        eot, sot = 50257, 50258
        prompt = [sot, 50260, 50359, 50363]  # <|startoftranscript|><|zh|><|transcribe|><|notimestamps|>
        print(f"faster-whisper / CTranslate2 int8, Whisper-{size} shapes (random), {threads} thread(s):")
        for s in seconds:
            audio = speech_like(s)
            n_tokens = max(1, round(tps * s))
            for beam in (1, 5):
                best = cpu = math.inf
                for _ in range(repeats):
                    t0, c0 = time.perf_counter(), time.process_time()
                    feats = fe(audio)[:, :3000]
                    feats = np.pad(feats, ((0, 0), (0, 3000 - feats.shape[1])))
                    x = ctranslate2.StorageView.from_array(np.ascontiguousarray(feats[None], np.float32))
                    model.generate(x, [prompt], beam_size=beam, max_length=n_tokens + len(prompt),
                                   suppress_tokens=[eot], suppress_blank=False)  # fmt: skip
                    best, cpu = min(best, time.perf_counter() - t0), min(cpu, time.process_time() - c0)
                print(
                    f"  {s:5.1f} s of audio, {n_tokens} tokens, beam {beam}: wall {best:6.3f} s -> "
                    f"{s / best:6.1f}x real time; CPU {cpu:6.3f} s -> {s / cpu:6.1f}x per CPU-second"
                )


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", type=Path, help="a SenseVoice folder (default: random weights, real shapes)")
    p.add_argument("--fp32", action="store_true", help="time the fp32 export instead of int8")
    p.add_argument("--whisper", choices=sorted(WHISPER), help="also time faster-whisper at these shapes")
    p.add_argument("--whisper-only", action="store_true", help="skip SenseVoice")
    p.add_argument("--seconds", default="5,10,20", help="audio lengths, comma separated")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--tokens-per-second", type=float, default=4.0)
    args = p.parse_args()
    seconds = [float(s) for s in args.seconds.split(",")]
    if args.whisper_only:
        pass
    elif args.model:
        bench_sensevoice(args.model, seconds, args.repeats, args.threads)
    else:
        with tempfile.TemporaryDirectory() as tmp:
            build_sensevoice(Path(tmp), int8=not args.fp32)
            bench_sensevoice(Path(tmp), seconds, args.repeats, args.threads)
    if args.whisper:
        bench_whisper(args.whisper, seconds, args.repeats, args.threads, args.tokens_per_second)


if __name__ == "__main__":
    main()
