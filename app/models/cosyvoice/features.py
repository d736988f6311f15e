"""The signal processing of CosyVoice's frontend, in torch, as the libraries the official code calls.

- :func:`resample`: ``torchaudio.transforms.Resample`` (windowed sinc, Hann, 6 zero crossings,
  rolloff 0.99), the official ``load_wav``'s resampler.
- :func:`whisper_log_mel`: ``whisper.log_mel_spectrogram(audio, n_mels=128)`` (openai-whisper
  20231117), the speech tokenizer's input. Its filter bank is whisper's ``mel_filters.npz``,
  which whisper made with ``librosa.filters.mel(sr=16000, n_fft=400, n_mels=128)``;
  :func:`slaney_mel` computes that matrix (equal to the shipped one, checked with librosa 0.10.2).
- :func:`kaldi_fbank`: ``torchaudio.compliance.kaldi.fbank(num_mel_bins=80, dither=0,
  sample_frequency=16000)`` (the other options at their defaults), CAM++'s input.
- :func:`matcha_mel`: ``matcha.utils.audio.mel_spectrogram`` with the yaml's settings (n_fft
  1920, hop 480, 80 bins, fmax 8000 for CosyVoice2, none for CosyVoice3), the flow's prompt mel.

Each follows the library's arithmetic step by step (same dtypes, same order) so that the
results agree to float rounding (tests/test_cosyvoice_frontend.py compares with the libraries'
outputs recorded by tools/cosyvoice_goldens.py ``features``).
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
import torch


# ---- resampling ----------------------------------------------------------------------------
@lru_cache(maxsize=8)
def _sinc_kernel(orig: int, new: int, zeros: int = 6, rolloff: float = 0.99) -> tuple[torch.Tensor, int]:
    """torchaudio's polyphase kernel [new, 1, K] for rates already divided by their gcd."""
    base = min(orig, new) * rolloff
    width = math.ceil(zeros * orig / base)
    idx = torch.arange(-width, width + orig, dtype=torch.float64)[None, None] / orig
    # torchaudio builds the phase offsets in the default dtype, then adds the float64 grid
    t = torch.arange(0, -new, -1, dtype=torch.float32)[:, None, None] / new + idx
    t = (t * base).clamp_(-zeros, zeros)
    window = torch.cos(t * math.pi / zeros / 2) ** 2
    t = t * math.pi
    kernel = torch.where(t == 0, torch.tensor(1.0).to(t), t.sin() / t) * (window * (base / orig))
    return kernel.to(torch.float32), width


def resample_cost(orig_freq: int, new_freq: int) -> int:
    """The number of values in the polyphase kernel for these rates: small for the usual rates
    (44.1 -> 16 kHz: 76 k), huge for rates sharing no large factor (44101 -> 16 kHz: 706 M)."""
    gcd = math.gcd(orig_freq, new_freq)
    orig, new = orig_freq // gcd, new_freq // gcd
    return new * (2 * math.ceil(6 * orig / (min(orig, new) * 0.99)) + orig)


def resample(audio: torch.Tensor, orig_freq: int, new_freq: int) -> torch.Tensor:
    """``audio`` [..., n] from ``orig_freq`` to ``new_freq`` Hz (``ceil(n * new / orig)`` samples)."""
    if orig_freq == new_freq:
        return audio
    gcd = math.gcd(orig_freq, new_freq)
    orig, new = orig_freq // gcd, new_freq // gcd
    kernel, width = _sinc_kernel(orig, new)
    shape = audio.shape
    x = audio.reshape(-1, shape[-1])
    n = x.shape[-1]
    y = torch.nn.functional.conv1d(torch.nn.functional.pad(x, (width, width + orig))[:, None],
                                   kernel.to(x), stride=orig)  # fmt: skip
    y = y.transpose(1, 2).reshape(x.shape[0], -1)[..., : math.ceil(new * n / orig)]
    return y.reshape(*shape[:-1], y.shape[-1])


# ---- mel filter banks ------------------------------------------------------------------------
_F_SP = 200.0 / 3  # Slaney's scale: 200/3 Hz per mel below 1 kHz, logarithmic above
_MIN_LOG_HZ = 1000.0
_MIN_LOG_MEL = _MIN_LOG_HZ / _F_SP
_LOGSTEP = np.log(6.4) / 27.0


def _hz_to_mel(f: np.ndarray) -> np.ndarray:
    f = np.asanyarray(f, dtype=np.float64)
    log_part = _MIN_LOG_MEL + np.log(np.maximum(f, 1e-10) / _MIN_LOG_HZ) / _LOGSTEP
    return np.where(f >= _MIN_LOG_HZ, log_part, f / _F_SP)


def _mel_to_hz(m: np.ndarray) -> np.ndarray:
    m = np.asanyarray(m, dtype=np.float64)
    return np.where(m >= _MIN_LOG_MEL, _MIN_LOG_HZ * np.exp(_LOGSTEP * (m - _MIN_LOG_MEL)), _F_SP * m)


@lru_cache(maxsize=8)
def slaney_mel(sr: int, n_fft: int, n_mels: int, fmin: float = 0.0, fmax: float | None = None
               ) -> torch.Tensor:  # fmt: skip
    """``librosa.filters.mel(sr=, n_fft=, n_mels=, fmin=, fmax=)`` (slaney scale and area
    normalization, float32): the bank whisper shipped and matcha computes. Cached: do not
    write into it."""
    fmax = sr / 2.0 if fmax is None else float(fmax)
    freqs = np.fft.rfftfreq(n=n_fft, d=1.0 / sr)
    edges = _mel_to_hz(np.linspace(_hz_to_mel(np.float64(fmin)), _hz_to_mel(np.float64(fmax)), n_mels + 2))
    diff = np.diff(edges)
    ramps = np.subtract.outer(edges, freqs)
    weights = np.zeros((n_mels, 1 + n_fft // 2), dtype=np.float32)
    for i in range(n_mels):  # librosa stores each row in float32 before normalizing
        weights[i] = np.maximum(0, np.minimum(-ramps[i] / diff[i], ramps[i + 2] / diff[i + 1]))
    weights *= (2.0 / (edges[2 : n_mels + 2] - edges[:n_mels]))[:, None]
    return torch.from_numpy(weights)


# ---- the three features ----------------------------------------------------------------------
def whisper_log_mel(audio: torch.Tensor) -> torch.Tensor:
    """Whisper's 128-bin log-mel of 16 kHz ``audio`` [..., n] -> [..., 128, n // 160]."""
    window = torch.hann_window(400, device=audio.device)
    stft = torch.stft(audio, 400, 160, window=window, return_complex=True)
    power = stft[..., :-1].abs() ** 2
    filters = slaney_mel(16000, 400, 128).to(audio.device)
    log_spec = torch.clamp(filters @ power, min=1e-10).log10()
    log_spec = torch.maximum(log_spec, log_spec.max() - 8.0)
    return (log_spec + 4.0) / 4.0


@lru_cache(maxsize=2)
def _kaldi_banks(bins: int = 80, padded: int = 512, sr: float = 16000.0, low: float = 20.0) -> torch.Tensor:
    """Kaldi's triangular mel bins [bins, padded // 2 + 1] (no VTLN, high edge at Nyquist),
    in float32 as torchaudio builds them."""
    nyquist = 0.5 * sr

    def mel(f):
        return 1127.0 * (math.log(1.0 + f / 700.0) if isinstance(f, float) else (1.0 + f / 700.0).log())

    lo, hi = mel(low), mel(nyquist)
    delta = (hi - lo) / (bins + 1)
    b = torch.arange(bins).unsqueeze(1)
    left, center, right = lo + b * delta, lo + (b + 1.0) * delta, lo + (b + 2.0) * delta
    bins_mel = mel((sr / padded) * torch.arange(padded / 2)).unsqueeze(0)
    up = (bins_mel - left) / (center - left)
    down = (right - bins_mel) / (right - center)
    banks = torch.max(torch.zeros(1), torch.min(up, down))
    return torch.nn.functional.pad(banks, (0, 1))


def kaldi_fbank(audio: torch.Tensor) -> torch.Tensor:
    """Kaldi's 80-bin log fbank of 16 kHz mono ``audio`` [n] -> [frames, 80]: 25 ms frames every
    10 ms (only whole frames), DC removed, pre-emphasis 0.97, Povey window, 512-point power
    spectrum, no dither, no energy column."""
    size, shift, padded = 400, 160, 512
    if audio.numel() < size:
        return torch.empty(0, 80, dtype=audio.dtype, device=audio.device)
    count = 1 + (audio.numel() - size) // shift
    frames = audio.contiguous().as_strided((count, size), (shift, 1))
    frames = frames - frames.mean(dim=1, keepdim=True)
    previous = torch.cat([frames[:, :1], frames[:, :-1]], dim=1)
    frames = frames - 0.97 * previous
    window = torch.hann_window(size, periodic=False, dtype=audio.dtype, device=audio.device).pow(0.85)
    frames = torch.nn.functional.pad(frames * window, (0, padded - size))
    power = torch.fft.rfft(frames).abs().pow(2.0)
    energies = torch.mm(power, _kaldi_banks().to(audio).T)
    return torch.max(energies, torch.tensor(torch.finfo(torch.float).eps).to(audio)).log()


def matcha_mel(audio: torch.Tensor, fmax: float | None, n_fft: int = 1920, num_mels: int = 80,
               sampling_rate: int = 24000, hop_size: int = 480, win_size: int = 1920,
               fmin: float = 0.0) -> torch.Tensor:  # fmt: skip
    """The flow's log-mel of ``audio`` [B, n] -> [B, num_mels, frames] with the yaml's
    ``feat_extractor`` settings (the defaults are the released ones): reflect padding of
    ``(n_fft - hop) / 2``, Hann STFT without centring, magnitude, slaney mel fmin..fmax,
    ``log(max(x, 1e-5))``."""
    pad = int((n_fft - hop_size) / 2)
    y = torch.nn.functional.pad(audio.unsqueeze(1), (pad, pad), mode="reflect").squeeze(1)
    window = torch.hann_window(win_size, device=audio.device)
    spec = torch.view_as_real(torch.stft(y, n_fft, hop_length=hop_size, win_length=win_size, window=window,
                                         center=False, normalized=False, onesided=True, return_complex=True))
    magnitude = torch.sqrt(spec.pow(2).sum(-1) + 1e-9)
    basis = slaney_mel(sampling_rate, n_fft, num_mels, float(fmin), fmax).to(audio.device)
    return torch.log(torch.clamp(basis @ magnitude, min=1e-5))
