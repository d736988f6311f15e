"""Weight norm folded at load: the official checkpoints of several families keep their convolutions
as weight-norm pairs (``weight_g``/``weight_v``, or the newer parametrization's
``original0``/``original1``); VoxDesk's modules hold the plain ``weight`` those pairs define."""

from __future__ import annotations

from collections.abc import Mapping

import torch

PAIRS = (
    (".weight_g", ".weight_v"),
    (".parametrizations.weight.original0", ".parametrizations.weight.original1"),
)


def fold_weight_norm(
    state: Mapping[str, torch.Tensor], dtype: torch.dtype | None = None, prefix: str = ""
) -> dict[str, torch.Tensor]:
    """``state`` with each weight-norm pair under ``prefix`` replaced by ``<stem>.weight = g · v /
    ‖v‖`` (norm over every dim but 0, as ``torch.nn.utils.weight_norm`` computes it), in ``dtype``
    when given (the dtype the official module computes it in); other keys unchanged."""
    out = dict(state)
    for key in list(out):
        for g_name, v_name in PAIRS:
            stem = key.removesuffix(g_name)
            if key.endswith(g_name) and stem.startswith(prefix) and stem + v_name in out:
                g, v = out.pop(key), out.pop(stem + v_name)
                if dtype is not None:
                    g, v = g.to(dtype), v.to(dtype)
                out[stem + ".weight"] = torch._weight_norm(v, g, 0)
    return out
