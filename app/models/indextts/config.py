"""Read an IndexTTS-2.5 ``config.yaml`` as plain data and check the keys the official code reads.

The official ``IndexTTS2`` reads the file with ``OmegaConf.load``, which evaluates ``${...}``
interpolations (resolvers may run code) and hands ``cfg.gpt`` to ``UnifiedVoice(**...)`` unchecked.
Here the text is parsed by PyYAML's safe composer and refused, with one line naming the key, if it
holds any explicit tag (``!!python/object``, ``!include`` ...), an anchor or alias, or a
``${...}`` interpolation; nothing in it is imported or run. Then every key of
docs/indextts_plan.md section 2 is checked for presence and type (one line naming the first
mismatch), including the unknown keys the official constructors would reject.

``IndexConfig.gpt`` carries the official defaults of ``UnifiedVoice`` for the four keys a
``config.yaml`` may leave out (``max_conditioning_inputs``, ``checkpointing``, ``types``,
``condition_num_latent``), and ``semantic_codec`` those of ``EnhancedCodec`` (``num_quantizers``,
``downsample_scale``), so the parts built from them need no defaults of their own.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any

import yaml

from app.errors import VoxDeskError

CONFIG_NAME = "config.yaml"
MAX_BYTES = 1 << 20
W2V_WIDTH = 1024
PLAIN_TAGS = {f"tag:yaml.org,2002:{t}" for t in ("str", "int", "float", "bool", "null", "map", "seq")}
EMOTION_COUNT = 8

INT, NUM, BOOL, STR, MAP, LIST = "a whole number", "a number", "true or false", "text", "a mapping", "a list"

# key -> the kind of value the official code uses; nested mappings are their own tables.
_GPT = {
    "layers": INT, "model_dim": INT, "heads": INT, "max_text_tokens": INT, "max_mel_tokens": INT,
    "mel_length_compression": INT, "number_text_tokens": INT, "number_mel_codes": INT,
    "start_text_token": INT, "stop_text_token": INT, "start_mel_token": INT, "stop_mel_token": INT,
    "train_solo_embeddings": BOOL, "use_mel_codes_as_input": BOOL, "emo_condition_module": MAP,
}  # fmt: skip
_GPT_DEFAULTS = {"max_conditioning_inputs": 1, "checkpointing": True, "types": 1, "condition_num_latent": 32}
_GPT_OPTIONAL = {"max_conditioning_inputs": INT, "checkpointing": BOOL, "types": INT,
                 "condition_num_latent": INT, "condition_type": STR, "condition_module": MAP}  # fmt: skip
_EMO = {"output_size": INT, "linear_units": INT, "attention_heads": INT, "num_blocks": INT,
        "input_layer": STR, "perceiver_mult": NUM}  # fmt: skip
_CODEC = {"codebook_size": INT, "hidden_size": INT, "codebook_dim": INT, "vocos_dim": INT,
          "vocos_intermediate_dim": INT, "vocos_num_layers": INT}  # fmt: skip
_CODEC_DEFAULTS = {"num_quantizers": 1, "downsample_scale": 2}
_SPECT = {"n_fft": INT, "win_length": INT, "hop_length": INT, "n_mels": INT}
_LR = {"channels": INT, "sampling_ratios": LIST, "is_discrete": BOOL, "content_codebook_size": INT}
_LR_OPTIONAL = {"in_channels": INT, "vector_quantize": BOOL, "n_codebooks": INT, "quantizer_dropout": NUM,
                "f0_condition": BOOL, "n_f0_bins": INT}  # fmt: skip
_DIT = {"hidden_dim": INT, "num_heads": INT, "depth": INT, "block_size": INT, "in_channels": INT,
        "content_dim": INT, "content_codebook_size": INT, "content_type": STR, "class_dropout_prob": NUM,
        "is_causal": BOOL, "long_skip_connection": BOOL, "uvit_skip_connection": BOOL,
        "final_layer_type": STR, "style_condition": BOOL, "style_as_token": BOOL,
        "time_as_token": BOOL}  # fmt: skip
_WAVENET = {"hidden_dim": INT, "num_layers": INT, "kernel_size": INT, "dilation_rate": INT, "p_dropout": NUM,
            "style_condition": BOOL}  # fmt: skip
_FILES = ("gpt_checkpoint", "s2mel_checkpoint", "w2v_stat", "emo_matrix", "spk_matrix", "qwen_emo_path")


class _Refused(Exception):
    """A key path and the reason the value is refused."""

    def __init__(self, where: str, why: str) -> None:
        super().__init__(f"{where}: {why}" if where else why)


@dataclass(frozen=True)
class IndexConfig:
    """The checked ``config.yaml``: ``tree`` is the whole document; the sections are plain dicts."""

    tree: dict[str, Any]
    gpt: dict[str, Any]
    s2mel: dict[str, Any]
    semantic_codec: dict[str, Any]
    gpt_checkpoint: str
    s2mel_checkpoint: str
    w2v_stat: str
    emo_matrix: str
    spk_matrix: str
    qwen_emo_path: str
    emo_num: list[int]
    version: Any = None

    @property
    def mel(self) -> dict[str, Any]:
        """The reference mel's settings as ``infer_v2_5.py:256-265`` derives them: note ``fmax`` is
        None only for the text "None" (or no key) and 8000 for any other value."""
        pre = self.s2mel["preprocess_params"]
        spect = pre["spect_params"]
        return {"n_fft": spect["n_fft"], "win_size": spect["win_length"], "hop_size": spect["hop_length"],
                "num_mels": spect["n_mels"], "sampling_rate": pre["sr"], "fmin": spect.get("fmin", 0),
                "fmax": None if spect.get("fmax", "None") == "None" else 8000, "center": False}  # fmt: skip


# ---- reading ----------------------------------------------------------------------------------
def _key_text(node: yaml.Node) -> str:
    return str(node.value) if isinstance(node, yaml.ScalarNode) else "?"


def _check_nodes(node: yaml.Node, where: str, depth: int = 0) -> None:
    """Refuse tags, and ``${`` in any text, naming the key where they sit."""
    if depth > 32:
        raise _Refused(where, "nested too deeply")
    if node.tag not in PLAIN_TAGS:
        raise _Refused(where, f"the tag {node.tag.replace('tag:yaml.org,2002:', '!!')} is not plain data")
    if isinstance(node, yaml.ScalarNode):
        if "${" in str(node.value):
            raise _Refused(where, "'${...}' interpolation is not read (write the value itself)")
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _check_nodes(item, f"{where}[{i}]", depth + 1)
    else:
        for key, value in node.value:
            name = _key_text(key)
            path = f"{where}.{name}" if where else name
            _check_nodes(key, path, depth + 1)
            _check_nodes(value, path, depth + 1)


class _Composer(yaml.SafeLoader):
    """The safe loader, refusing anchors and aliases (no billion laughs)."""

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node | None:
        event = self.peek_event()
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
            raise _Refused(f"line {event.start_mark.line + 1}", "YAML anchors and aliases are not read")
        return super().compose_node(parent, index)


def read_tree(path: str | Path) -> dict[str, Any]:
    """The YAML at ``path`` as plain data; :class:`VoxDeskError` (one line) for anything else."""
    p = Path(path)
    try:
        if p.stat().st_size > MAX_BYTES:
            raise VoxDeskError(f"{p.name} is larger than 1 MiB: not an IndexTTS config.")
        text = p.read_bytes().decode("utf-8")
    except FileNotFoundError:
        raise VoxDeskError(f"{p.parent} has no {p.name}: choose an IndexTTS-2.5 model folder.") from None
    except OSError as exc:
        raise VoxDeskError(f"Cannot read {p} ({exc.strerror or exc}).") from None
    except UnicodeDecodeError:
        raise VoxDeskError(f"{p.name} is not UTF-8 text: not an IndexTTS config.") from None
    loader = _Composer(text)
    try:
        node = loader.get_single_node()
        if not isinstance(node, yaml.MappingNode):
            raise _Refused("", "the top level is not a mapping of names")
        _check_nodes(node, "")
        tree = loader.construct_document(node)
    except _Refused as exc:
        raise VoxDeskError(f"{p.name}: {exc}; nothing in it was run.") from None
    except (yaml.YAMLError, RecursionError) as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1})" if mark is not None else ""
        reason = getattr(exc, "problem", None) or type(exc).__name__
        raise VoxDeskError(
            f"{p.name} is not a config VoxDesk reads{where}: {reason}; nothing in it was run."
        ) from None
    finally:
        loader.dispose()
    if not all(isinstance(k, str) for k in tree):
        raise VoxDeskError(f"{p.name}: the top level is not a mapping of names.")
    return tree


# ---- checking ---------------------------------------------------------------------------------
def _fits(value: Any, kind: str) -> bool:
    if kind == INT:
        return type(value) is int
    if kind == NUM:
        return type(value) in (int, float)
    if kind == BOOL:
        return type(value) is bool
    if kind == STR:
        return type(value) is str
    if kind == MAP:
        return isinstance(value, dict)
    return isinstance(value, list)


def _section(tree: dict[str, Any], where: str, required: dict[str, str],
             optional: dict[str, str] | None = None, closed: bool = False) -> dict[str, Any]:  # fmt: skip
    """Check ``required`` (and ``optional`` when present) in the mapping at ``where``."""
    if not isinstance(tree, dict):
        raise _Refused(where, "is not a mapping")
    for key, kind in {**required, **(optional or {})}.items():
        if key not in tree:
            if key in required:
                raise _Refused(f"{where}.{key}", "is missing")
            continue
        if not _fits(tree[key], kind):
            raise _Refused(f"{where}.{key}", f"must be {kind}, not {tree[key]!r}")
    if closed:
        unknown = next((k for k in tree if k not in required and k not in (optional or {})), None)
        if unknown is not None:
            raise _Refused(f"{where}.{unknown}", "is not a setting of this section")
    return tree


def _relative(where: str, value: Any) -> str:
    """A file or folder name inside the model folder. A path that leads elsewhere (absolute, as a
    training machine's path in a released config may be, or through '..') is read as its last
    name inside the model folder: a file from a config never comes from outside the folder."""
    if type(value) is not str or not value.strip():
        raise _Refused(where, "must be a file name inside the model folder")
    for flavour in (PurePosixPath, PureWindowsPath):
        path = flavour(value)
        if path.is_absolute() or path.drive or ".." in path.parts:
            name = PureWindowsPath(value.rstrip("/\\")).name  # splits on both separators
            if name in ("", ".", ".."):
                raise _Refused(where, f"'{value}' points outside the model folder")
            return name
    return value


def parse_config(tree: dict[str, Any]) -> IndexConfig:
    """Check ``tree`` (see :func:`read_tree`); ``_Refused`` names the first key that does not fit."""
    for section in ("gpt", "semantic_codec", "s2mel"):
        if section not in tree:
            raise _Refused(section, "is missing")
    gpt = _section(tree["gpt"], "gpt", _GPT, _GPT_OPTIONAL, closed=True)
    _section(gpt["emo_condition_module"], "gpt.emo_condition_module", _EMO)
    if gpt["number_mel_codes"] <= max(gpt["start_mel_token"], gpt["stop_mel_token"]):
        raise _Refused("gpt.number_mel_codes", "must exceed start_mel_token and stop_mel_token")
    codec = tree["semantic_codec"]
    _section(codec, "semantic_codec", _CODEC, {"num_quantizers": INT, "downsample_scale": INT}, closed=True)
    if codec.get("downsample_scale", 2) <= 1:
        raise _Refused("semantic_codec.downsample_scale", "must be more than 1")
    s2mel = tree["s2mel"]
    _section(s2mel, "s2mel", {"preprocess_params": MAP, "length_regulator": MAP, "DiT": MAP, "wavenet": MAP,
                              "style_encoder": MAP})  # fmt: skip
    pre = _section(s2mel["preprocess_params"], "s2mel.preprocess_params", {"sr": INT, "spect_params": MAP})
    _section(pre["spect_params"], "s2mel.preprocess_params.spect_params", _SPECT, {"fmin": NUM})
    lr = _section(s2mel["length_regulator"], "s2mel.length_regulator", _LR, _LR_OPTIONAL)
    if lr.get("in_channels", W2V_WIDTH) != W2V_WIDTH:
        raise _Refused("s2mel.length_regulator.in_channels", f"must be {W2V_WIDTH} (the w2v-BERT width)")
    if not all(type(r) is int for r in lr["sampling_ratios"]):
        raise _Refused("s2mel.length_regulator.sampling_ratios", "must be whole numbers")
    _section(s2mel["DiT"], "s2mel.DiT", _DIT, {"zero_prompt_speech_token": BOOL})
    _section(s2mel["wavenet"], "s2mel.wavenet", _WAVENET)
    _section(s2mel["style_encoder"], "s2mel.style_encoder", {"dim": INT})
    if codec["hidden_size"] != W2V_WIDTH:
        raise _Refused("semantic_codec.hidden_size", f"must be {W2V_WIDTH} (the length regulator's input)")
    names = {key: _relative(key, tree[key]) if key in tree else None for key in _FILES}
    missing = next((key for key, value in names.items() if value is None), None)
    if missing is not None:
        raise _Refused(missing, "is missing")
    emo_num = tree.get("emo_num")
    if (
        not isinstance(emo_num, list)
        or len(emo_num) != EMOTION_COUNT
        or not all(type(n) is int and n > 0 for n in emo_num)
    ):
        raise _Refused("emo_num", f"must list {EMOTION_COUNT} positive whole numbers (rows per emotion)")
    return IndexConfig(
        tree=tree,
        gpt={**_GPT_DEFAULTS, **gpt},
        s2mel=s2mel,
        semantic_codec={**_CODEC_DEFAULTS, **codec},
        emo_num=list(emo_num),
        version=tree.get("version"),
        **names,  # type: ignore[arg-type]
    )


def load_config(model_dir: str | Path) -> IndexConfig:
    """The checked ``config.yaml`` of ``model_dir``; :class:`VoxDeskError` naming the first problem."""
    path = Path(model_dir) / CONFIG_NAME
    tree = read_tree(path)
    try:
        return parse_config(copy.deepcopy(tree))
    except _Refused as exc:
        raise VoxDeskError(f"{path.name} in {path.parent}: {exc}. Download the model folder again.") from None
