"""int8 weights for the CPU path: dynamic quantization of the transformer stacks' Linear layers.

At batch 1 a CPU decode step is bound by reading weights: the base and residual LMs once, the
LocDiT estimator once per CFM step (9 times with CFG batched). ``torch.ao``'s dynamic
quantization keeps each Linear's weight in int8, one scale per output channel, and quantizes
activations on the fly per call, so a step reads a quarter of the fp32 bytes and runs int8 GEMMs
(VNNI where the CPU has it). q/k/v and gate/up are packed into one Linear each first: one call
(and one activation quantization) where there were three or two, and per-channel scales keep
each projection's own range. Only the four transformer stacks are converted; the small
projections, the stop head (whose weight also names the model dtype), FSQ and the audio VAE stay
in float. The error against fp32 is measured by ``voxdesk bench --fidelity`` (docs/benchmarks.md).
"""

from __future__ import annotations

import warnings

import torch
from torch import nn

from app.errors import VoxDeskError
from app.models.voxcpm.minicpm import MLP, Attention, pack_projections
from app.models.voxcpm.model import VoxCPM

STACKS = ("base_lm", "residual_lm", "feat_encoder")
UNPACKED = {Attention: ("q_proj", "k_proj", "v_proj"), MLP: ("gate_proj", "up_proj")}


def _pack_only(stack: nn.Module) -> None:
    """Pack the stack's projections and drop the separate Linears (views of the packed weight,
    which quantization would otherwise convert a second time)."""
    pack_projections(stack)
    for module in stack.modules():
        for name in UNPACKED.get(type(module), ()):
            delattr(module, name)


def quantize_int8(model: VoxCPM) -> VoxCPM:
    """Convert ``model``'s transformer stacks to int8 dynamic-quantized Linear, in place (CPU)."""
    if model.device.type != "cpu" or model.dtype != torch.float32:
        raise VoxDeskError("int8 weights are made from the float32 model on the CPU: leave --dtype out.")
    qconfig = {nn.Linear: torch.ao.quantization.per_channel_dynamic_qconfig}
    est = model.feat_decoder.estimator
    with warnings.catch_warnings():  # torch.ao.quantization announces its move to torchao
        warnings.simplefilter("ignore")
        quant = torch.ao.quantization.quantize_dynamic
        for name in STACKS:
            _pack_only(getattr(model, name))
            setattr(model, name, quant(getattr(model, name), qconfig, dtype=torch.qint8))
        _pack_only(est.decoder)
        est.decoder = quant(est.decoder, qconfig, dtype=torch.qint8)
    return model
