"""The slot-indexed streaming decoder equals the full causal decode, for V1 and V2."""

from __future__ import annotations

import random

import pytest
import torch
from test_audio_vae import TINY_V1, TINY_V2, make_pair

from app.models.voxcpm.audio_vae import AudioVAE
from app.models.voxcpm.streaming_vae import StreamingDecoder

# fp32: chunked convs round differently from whole-sequence ones; with the tiny random weights the
# pre-tanh activations reach ~30, so rounding shows up around 1e-5 and varies with the thread count
# (3.4e-5 with one thread). float64 shows the exactness.
ATOL = {torch.float32: 1e-4, torch.float64: 1e-10}


def tiny_vae(version: int, dtype: torch.dtype = torch.float32) -> AudioVAE:
    return make_pair(version, TINY_V1 if version == 1 else TINY_V2, seed=7)[1].to(dtype)


def full(vae: AudioVAE, z: torch.Tensor) -> torch.Tensor:
    with torch.no_grad():
        return vae.decode(z.unsqueeze(0))[0, 0]


@pytest.mark.parametrize("version", [1, 2])
@pytest.mark.parametrize("fold", [False, True])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_interleaved_slots_equal_full_decode(version: int, fold: bool, dtype: torch.dtype) -> None:
    vae = tiny_vae(version, dtype)
    if fold:
        vae.fold_weight_norm()
    rng = random.Random(version)
    lengths = {0: 23, 3: 17, 5: 30, 6: 9}  # slot -> frames; slots 1, 2, 4, 7 stay unused
    seqs = {s: torch.randn(8, n, dtype=dtype) for s, n in lengths.items()}
    got: dict[int, list[torch.Tensor]] = {s: [] for s in seqs}
    pos = dict.fromkeys(seqs, 0)
    dec = StreamingDecoder(vae, max_slots=8)
    while any(pos[s] < lengths[s] for s in seqs):
        live = [s for s in seqs if pos[s] < lengths[s]]
        batch = rng.sample(live, rng.randint(1, len(live)))  # varying membership and order
        n = rng.choice([1, 2, 4])
        n = min([n] + [lengths[s] - pos[s] for s in batch])
        z = torch.stack([seqs[s][:, pos[s] : pos[s] + n] for s in batch])
        out = dec.decode(z, torch.tensor(batch))
        assert out.shape == (len(batch), n * vae.decoder_hop)
        for row, s in enumerate(batch):
            got[s].append(out[row])
            pos[s] += n
    for s, z in seqs.items():
        torch.testing.assert_close(torch.cat(got[s]), full(vae, z), rtol=0, atol=ATOL[dtype])


@pytest.mark.parametrize("version", [1, 2])
def test_one_patch_at_a_time_and_whole_sequence(version: int) -> None:
    vae = tiny_vae(version)
    z = torch.randn(8, 24)
    want = full(vae, z)
    dec = StreamingDecoder(vae, max_slots=2)
    per_patch = torch.cat([dec.decode(z[None, :, i : i + 4], [1])[0] for i in range(0, 24, 4)])
    torch.testing.assert_close(per_patch, want, rtol=0, atol=ATOL[torch.float32])
    dec.reset(0)
    torch.testing.assert_close(dec.decode(z[None], [0])[0], want, rtol=0, atol=ATOL[torch.float32])


def test_reset_starts_a_fresh_sequence() -> None:
    vae = tiny_vae(2)
    dec = StreamingDecoder(vae, max_slots=3)
    dec.decode(torch.randn(2, 8, 6), torch.tensor([2, 0]))
    z = torch.randn(8, 10)
    stale = dec.decode(z[None], [2])[0]
    assert (stale - full(vae, z)).abs().max() > 1e-3  # the old history leaks without a reset
    dec.reset([2])
    torch.testing.assert_close(dec.decode(z[None], [2])[0], full(vae, z), rtol=0, atol=ATOL[torch.float32])


@pytest.mark.parametrize("version", [1, 2])
def test_warm_continues_from_context(version: int) -> None:
    vae = tiny_vae(version)
    context, gen = torch.randn(8, 12), torch.randn(8, 8)
    want = full(vae, torch.cat([context, gen], dim=1))[12 * vae.decoder_hop :]
    dec = StreamingDecoder(vae, max_slots=4)
    dec.decode(torch.randn(1, 8, 5), [3])  # another sequence in flight is untouched
    dec.warm(1, context)
    pieces = [dec.decode(gen[None, :, i : i + 2], [1])[0] for i in range(0, 8, 2)]
    torch.testing.assert_close(torch.cat(pieces), want, rtol=0, atol=ATOL[torch.float32])


def test_bad_slots_are_rejected() -> None:
    dec = StreamingDecoder(tiny_vae(1), max_slots=2)
    with pytest.raises(ValueError, match="twice"):
        dec.decode(torch.randn(2, 8, 1), [1, 1])
    with pytest.raises(IndexError):
        dec.decode(torch.randn(1, 8, 1), [2])
    with pytest.raises(ValueError, match="latent rows"):
        dec.decode(torch.randn(2, 8, 1), [0])
