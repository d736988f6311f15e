"""A tiny speaker-embedding model in the WeSpeaker ONNX format sherpa-onnx loads, for tests.

The graph takes sherpa-onnx's 80-bin log-mel features ``[N, T, 80]`` and returns the mean over
time of a fixed random projection to :data:`DIM` values, so the embedding follows the spectrum:
two recordings of the same tones are close, a different pitch is farther. Building it needs the
``onnx`` package (a test dependency); loading it needs only sherpa-onnx, like the real model.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

DIM = 16


def write_tiny_speaker(directory: str | Path) -> Path:
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    w = np.random.default_rng(0).standard_normal((80, DIM)).astype(np.float32) / 80
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["feats", "W"], ["proj"]),
         helper.make_node("ReduceMean", ["proj"], ["embs"], axes=[1], keepdims=0)],
        "tiny_speaker",
        [helper.make_tensor_value_info("feats", TensorProto.FLOAT, ["N", "T", 80])],
        [helper.make_tensor_value_info("embs", TensorProto.FLOAT, ["N", DIM])],
        [numpy_helper.from_array(w, "W")],
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 7
    meta = {"framework": "wespeaker", "output_dim": DIM, "sample_rate": 16000, "normalize_samples": 0,
            "language": "English", "comment": "VoxDesk test model"}  # fmt: skip
    for key, value in meta.items():
        entry = model.metadata_props.add()
        entry.key, entry.value = key, str(value)
    onnx.checker.check_model(model)
    (directory / "model.onnx").write_bytes(model.SerializeToString())
    return directory


@pytest.fixture(scope="session")
def tiny_speaker(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding the tiny speaker model (written once per session)."""
    return write_tiny_speaker(tmp_path_factory.mktemp("tiny-speaker"))
