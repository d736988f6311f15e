"""The files of an IndexTTS-2.5 folder, checked and read as untrusted input.

The official code ``torch.load``s every weight file as a full pickle and keeps random values for
missing or mis-shaped keys with a printed warning (docs/indextts_plan.md finding 10). Here:
:func:`load_torch` reads with ``weights_only=True`` (a file whose pickle would build other objects
is refused before anything of it runs), :func:`strict_load` refuses a state dict that does not fit
the module exactly (one line naming the first missing, unexpected or mis-shaped key), and
:func:`check_folder` finds every part of a folder and says what still works without those that
are missing, instead of downloading them at run time.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import torch

from app.errors import VoxDeskError
from app.models.common.torch_files import load_torch
from app.models.indextts.config import CONFIG_NAME, IndexConfig, load_config

__all__ = ["IndexFolder", "check_folder", "load_torch", "state_of", "strict_load"]

VOCAB_NAME = "multilingual_zh_ja_yue_char_del.tiktoken"  # hard-coded by the official tokenizer
CODEC_NAME = "codec.pth"  # hard-coded, not read from config.yaml (infer_v2_5.py:184)
W2V_DIR = ("hf_cache", "w2v-bert-2.0")
CAMPPLUS = ("hf_cache", "campplus_cn_common.bin")
BIGVGAN_DIR = ("hf_cache", "bigvgan")

NO_SPEECH = "nothing can be spoken"
NO_EMOTION_ROWS = "emotion vectors and emotion from text need it"
NO_QWEN = "emotion from text needs the QwenEmotion model"


def state_of(data: object, key: str, path: Path) -> dict[str, torch.Tensor]:
    """``data[key]`` when ``data`` is a dict holding ``key`` (else ``data``), checked to be a table of
    named tensors; the official loaders unwrap ``gpt.pth['model']`` the same way."""
    if isinstance(data, dict) and key in data:
        data = data[key]
    if not isinstance(data, dict) or not all(isinstance(k, str) and isinstance(v, torch.Tensor)
                                             for k, v in data.items()):  # fmt: skip
        raise VoxDeskError(f"{path.name} in {path.parent} does not hold a table of named tensors: download "
                           "the model folder again.")  # fmt: skip
    return data


def strict_load(module: torch.nn.Module, state_dict: dict[str, torch.Tensor], what: str) -> None:
    """Load ``state_dict`` into ``module`` only if it fits exactly; else one line naming the first
    missing, unexpected or mis-shaped key (``what`` names the file or part in that line)."""
    own = module.state_dict()
    problem = next((f"{k} is missing" for k in own if k not in state_dict), None)
    problem = problem or next((f"{k} is not part of this model" for k in state_dict if k not in own), None)
    problem = problem or next(
        (f"{k} has shape {list(v.shape)} instead of {list(own[k].shape)}" for k, v in state_dict.items()
         if v.shape != own[k].shape),
        None,
    )  # fmt: skip
    if problem is not None:
        raise VoxDeskError(f"{what} does not fit this model ({problem}): download the model folder again.")
    module.load_state_dict(state_dict, strict=True)


@dataclass(frozen=True)
class IndexFolder:
    """Every part of one folder, whether present or not; ``missing`` maps the label of each absent
    part to what it costs, in the order of :data:`PARTS`."""

    root: Path
    config: IndexConfig
    gpt: Path
    s2mel: Path
    codec: Path
    w2v_stat: Path
    vocab: Path
    w2v_bert: Path
    campplus: Path
    bigvgan: Path
    spk_matrix: Path
    emo_matrix: Path
    qwen_emo: Path
    missing: dict[str, str] = field(default_factory=dict)

    @property
    def can_speak(self) -> bool:
        """True when every part plain cloning needs is present."""
        return all(cost != NO_SPEECH for cost in self.missing.values())

    @property
    def emotion_vectors(self) -> bool:
        """True when the 8-value emotion vector works (the speaker and emotion matrices)."""
        return self.can_speak and not any(cost == NO_EMOTION_ROWS for cost in self.missing.values())

    @property
    def emotion_text(self) -> bool:
        """True when describing an emotion in words works (vectors plus the QwenEmotion model)."""
        return self.emotion_vectors and NO_QWEN not in self.missing.values()

    def summary(self) -> str:
        """One line: what is missing and what that costs, or that the folder is complete."""
        if not self.missing:
            return f"{self.root.name}: every part is present."
        parts = "; ".join(f"{label} is missing: {cost}" for label, cost in self.missing.items())
        return f"{self.root.name}: {parts}."

    def require_speech(self) -> None:
        """Raise :class:`VoxDeskError` naming the first missing part that speaking needs."""
        label = next((k for k, v in self.missing.items() if v == NO_SPEECH), None)
        if label is not None:
            raise VoxDeskError(f"{label} is missing from {self.root}: nothing can be spoken without it. "
                               "Download the complete model folder again.")  # fmt: skip


def _has_weights(folder: Path) -> bool:
    return any(folder.glob("*.safetensors")) or (folder / "pytorch_model.bin").is_file()


def check_folder(model_dir: str | Path) -> IndexFolder:
    """The parts of an IndexTTS-2.5 folder: which are missing and what still works without them.

    Only ``config.yaml`` is required here (it names the other files; a bad one raises
    :class:`VoxDeskError`); the folder may lack any other part, :attr:`IndexFolder.missing` says
    what each absence costs. Files are checked to exist, not read."""
    root = Path(model_dir)
    if not root.is_dir():
        raise VoxDeskError(f"Model folder {root} does not exist: choose an IndexTTS-2.5 model folder.")
    if not (root / CONFIG_NAME).is_file():
        raise VoxDeskError(f"{root} has no {CONFIG_NAME}: choose an IndexTTS-2.5 model folder.")
    cfg = load_config(root)
    paths = {
        "gpt": root / cfg.gpt_checkpoint,
        "s2mel": root / cfg.s2mel_checkpoint,
        "codec": root / CODEC_NAME,
        "w2v_stat": root / cfg.w2v_stat,
        "vocab": root / VOCAB_NAME,
        "w2v_bert": root.joinpath(*W2V_DIR),
        "campplus": root.joinpath(*CAMPPLUS),
        "bigvgan": root.joinpath(*BIGVGAN_DIR),
        "spk_matrix": root / cfg.spk_matrix,
        "emo_matrix": root / cfg.emo_matrix,
        "qwen_emo": root / cfg.qwen_emo_path,
    }
    present = {
        "w2v_bert": lambda p: (p / "config.json").is_file() and (p / "preprocessor_config.json").is_file()
        and _has_weights(p),
        "bigvgan": lambda p: (p / "config.json").is_file() and (p / "bigvgan_generator.pt").is_file(),
        "qwen_emo": lambda p: (p / "config.json").is_file() and _has_weights(p),
    }  # fmt: skip
    labels = {
        "gpt": f"the GPT ({cfg.gpt_checkpoint})",
        "s2mel": f"S2Mel ({cfg.s2mel_checkpoint})",
        "codec": f"the semantic codec ({CODEC_NAME})",
        "w2v_stat": f"the w2v-BERT statistics ({cfg.w2v_stat})",
        "vocab": f"the text vocabulary ({VOCAB_NAME})",
        "w2v_bert": "the w2v-BERT speech encoder (hf_cache/w2v-bert-2.0)",
        "campplus": "the CAMPPlus speaker encoder (hf_cache/campplus_cn_common.bin)",
        "bigvgan": "the BigVGAN vocoder (hf_cache/bigvgan)",
        "spk_matrix": f"the speaker matrix ({cfg.spk_matrix})",
        "emo_matrix": f"the emotion matrix ({cfg.emo_matrix})",
        "qwen_emo": f"the QwenEmotion model ({cfg.qwen_emo_path.rstrip('/')})",
    }
    costs = {"spk_matrix": NO_EMOTION_ROWS, "emo_matrix": NO_EMOTION_ROWS, "qwen_emo": NO_QWEN}
    missing = {
        labels[name]: costs.get(name, NO_SPEECH)
        for name, path in paths.items()
        if not present.get(name, Path.is_file)(path)
    }
    return IndexFolder(root=root, config=cfg, missing=missing, **paths)
