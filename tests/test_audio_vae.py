"""AudioVAE V1/V2 against the official classes on tiny configs (spec §6), fp32 on CPU."""

from __future__ import annotations

import pytest
import torch
from official import import_official

from app.errors import VoxDeskError
from app.models.voxcpm.audio_vae import AudioVAE, AudioVAEConfig

TINY_V1 = {
    "encoder_dim": 8,
    "encoder_rates": [2, 2],
    "latent_dim": 8,
    "decoder_dim": 16,
    "decoder_rates": [2, 2],
    "depthwise": True,
    "sample_rate": 16000,
}
TINY_V2 = {
    "encoder_dim": 8,
    "encoder_rates": [2, 2],
    "latent_dim": 8,
    "decoder_dim": 32,
    "decoder_rates": [2, 2, 3],
    "depthwise": True,
    "sample_rate": 16000,
    "out_sample_rate": 48000,
    "sr_bin_boundaries": [20000, 30000, 40000],
    "cond_dim": 8,
}
# Odd strides exercise V2's output_padding-dependent encoder padding; non-depthwise the other branch.
ODD_V1 = {**TINY_V1, "encoder_rates": [3, 5], "decoder_rates": [5, 3], "depthwise": False}
ODD_V2 = {**TINY_V2, "encoder_rates": [5, 3], "decoder_rates": [7, 3], "decoder_dim": 16}
CASES = [(1, TINY_V1), (2, TINY_V2), (1, ODD_V1), (2, ODD_V2)]
# In float64 ours and the official VAE agree to ~1e-13: the arithmetic is the same. In float32 the
# tiny random weights drive pre-tanh activations to ~30, so the last bits depend on how the CPU's
# conv kernel orders its sums (thread count, AVX2 vs AVX-512): 2.4e-5 was seen on CI's 2 cores.
F32 = {"rtol": 1e-4, "atol": 1e-4}
F64 = {"rtol": 1e-10, "atol": 1e-10}


def official_vae(version: int, cfg: dict) -> torch.nn.Module:
    audiovae = import_official().modules.audiovae
    if version == 1:
        return audiovae.AudioVAE(audiovae.AudioVAEConfig(**cfg))
    return audiovae.AudioVAEV2(audiovae.AudioVAEConfigV2(**cfg))


def random_state(module: torch.nn.Module, seed: int) -> dict[str, torch.Tensor]:
    """Perturb every tensor (norm gains, alphas, sr embeddings too) away from its init."""
    g = torch.Generator().manual_seed(seed)
    out = {}
    for key, value in module.state_dict().items():
        if value.is_floating_point():
            noise = torch.randn(value.shape, generator=g)
            value = (1.0 + 0.3 * noise) if key.endswith(("weight_g", "alpha")) else 0.3 * noise
        out[key] = value
    return out


def make_pair(version: int, cfg: dict, seed: int = 0) -> tuple[torch.nn.Module, AudioVAE]:
    ref = official_vae(version, cfg).eval()
    ref.load_state_dict(random_state(ref, seed))
    ours = AudioVAE(AudioVAEConfig.from_dict(cfg, version)).eval()
    ours.load_state_dict(ref.state_dict(), strict=True)
    return ref, ours


@pytest.mark.parametrize("version,cfg", CASES)
def test_state_dict_keys_and_shapes_match_official(version: int, cfg: dict) -> None:
    ref = official_vae(version, cfg).state_dict()
    ours = AudioVAE(AudioVAEConfig.from_dict(cfg, version)).state_dict()
    assert {k: tuple(v.shape) for k, v in ours.items()} == {k: tuple(v.shape) for k, v in ref.items()}
    assert {k: v.dtype for k, v in ours.items()} == {k: v.dtype for k, v in ref.items()}


@pytest.mark.parametrize("version", [1, 2])
def test_full_size_default_keys_match_official(version: int) -> None:
    """The real checkpoints use the default configs: compare keys/shapes on the meta device."""
    with torch.device("meta"):
        ref = official_vae(version, {}).state_dict()
        ours = AudioVAE(AudioVAEConfig.from_dict(None, version)).state_dict()
    assert {k: tuple(v.shape) for k, v in ours.items()} == {k: tuple(v.shape) for k, v in ref.items()}


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("version,cfg", CASES)
def test_encode_decode_match_official(version: int, cfg: dict, dtype: torch.dtype) -> None:
    tol = F32 if dtype == torch.float32 else F64
    torch.manual_seed(1)
    ref, ours = make_pair(version, cfg)
    ref, ours = ref.to(dtype), ours.to(dtype)
    hop = ours.chunk_size
    wav = 0.5 * torch.randn(2, 1, 7 * hop + 3, dtype=dtype)  # not a hop multiple: the right pad
    with torch.no_grad():
        mu_ref = ref.encode(wav, 16000)
        mu = ours.encode(wav, 16000)
        assert mu.shape == (2, cfg["latent_dim"], 8)
        torch.testing.assert_close(mu, mu_ref, **tol)
        z = torch.randn(2, cfg["latent_dim"], 9, dtype=dtype)
        out_ref = ref.decode(z)
        out = ours.decode(z)
    assert out.shape == (2, 1, 9 * ours.decoder_hop)
    torch.testing.assert_close(out, out_ref, **tol)


def test_v2_sample_rate_condition_buckets() -> None:
    ref, ours = make_pair(2, TINY_V2, seed=3)
    z = torch.randn(1, 8, 5)
    with torch.no_grad():
        outs = {sr: ours.decode(z, sr) for sr in (16000, 20000, 24000, 30000, 44100, 48000)}
        for sr, out in outs.items():
            want = ref.decode(z, torch.tensor([sr], dtype=torch.int32))
            torch.testing.assert_close(out, want, **F32)
    # 20000 sits on a boundary (bucket 0, like 16000); 44100 and 48000 share the top bucket.
    assert torch.equal(outs[16000], outs[20000]) and torch.equal(outs[44100], outs[48000])
    assert not torch.allclose(outs[24000], outs[48000])


@pytest.mark.parametrize("version,cfg", CASES[:2])
def test_fold_weight_norm_is_equivalent(version: int, cfg: dict) -> None:
    _, ours = make_pair(version, cfg, seed=5)
    wav = torch.randn(1, 1, 40 * ours.chunk_size)
    z = torch.randn(1, 8, 11)
    with torch.no_grad():
        mu, out = ours.encode(wav, 16000), ours.decode(z)
        ours.fold_weight_norm()
        torch.testing.assert_close(ours.encode(wav, 16000), mu, **F32)
        torch.testing.assert_close(ours.decode(z), out, **F32)
    keys = ours.state_dict().keys()
    assert not any(k.endswith(("weight_g", "weight_v")) for k in keys)
    assert "decoder.model.0.weight" in keys
    # Folding first and loading the official weight_g/weight_v checkpoint afterwards works too.
    ref, _ = make_pair(version, cfg, seed=5)
    early = AudioVAE(AudioVAEConfig.from_dict(cfg, version)).eval().fold_weight_norm()
    early.load_state_dict(ref.state_dict(), strict=True)
    with torch.no_grad():
        torch.testing.assert_close(early.decode(z), out, **F32)


def test_config_defaults_and_derived_values() -> None:
    v1 = AudioVAEConfig.from_dict(None, 1)
    assert (v1.chunk_size, v1.decoder_hop, v1.output_rate, v1.latent_dim) == (640, 640, 16000, 64)
    assert not v1.conditioned
    v2 = AudioVAEConfig.from_dict({"unknown_key": 1}, 2)
    assert (v2.chunk_size, v2.decoder_hop, v2.encoder_rate, v2.output_rate) == (640, 1920, 16000, 48000)
    assert v2.conditioned and v2.extra == {"unknown_key": 1}
    # VoxCPM1.5's VAE; V1 ignores an out_sample_rate key as the official pydantic model does.
    v15 = AudioVAEConfig.from_dict(
        {
            "encoder_dim": 64,
            "encoder_rates": [2, 3, 6, 7, 7],
            "decoder_dim": 2048,
            "decoder_rates": [7, 7, 6, 3, 2],
            "sample_rate": 44100,
            "out_sample_rate": 48000,
        },
        1,
    )
    assert (v15.chunk_size, v15.decoder_hop, v15.output_rate) == (1764, 1764, 44100)
    assert AudioVAEConfig.from_dict({"latent_dim": None}, 2).latent_dim == 128 * 16
    no_cond = AudioVAEConfig.from_dict({"sr_bin_boundaries": None}, 2)
    assert not no_cond.conditioned and no_cond.output_rate == 48000


@pytest.mark.parametrize(
    "bad", [{"use_noise_block": True}, {"cond_type": "film"}, {"decoder_dim": 100}, {"encoder_rates": []}]
)
def test_unsupported_configs_raise_plain_errors(bad: dict) -> None:
    with pytest.raises(VoxDeskError, match="audio_vae_config is not supported"):
        AudioVAEConfig.from_dict(bad, 2)


def test_encode_rejects_wrong_rate() -> None:
    _, ours = make_pair(1, TINY_V1)
    with pytest.raises(ValueError, match="16000 Hz"):
        ours.encode(torch.zeros(1, 1, 8), 44100)
