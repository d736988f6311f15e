"""Every network of one IndexTTS-2.5 folder, loaded once (what the official ``IndexTTS2.__init__`` builds).

:meth:`IndexModels.load` checks the folder first (:func:`weights.check_folder`): a folder that
cannot speak is refused in one line naming the first missing part; a folder without the emotion
matrices or the QwenEmotion model loads, and the controls that need them say so when used
(:meth:`IndexModels.require_matrices`, :meth:`IndexModels.require_qwen`). Every weight file is
read with ``weights_only=True`` and loaded strictly (the parts' ``load``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import torch

from app.errors import VoxDeskError
from app.models.indextts.bigvgan import BigVGAN
from app.models.indextts.campplus import CAMPPlus, load_campplus
from app.models.indextts.codec import SemanticCodec
from app.models.indextts.config import IndexConfig
from app.models.indextts.dit import S2MelDiT
from app.models.indextts.emotion import EmotionEncoder, EmotionMatrices
from app.models.indextts.gpt import UnifiedGPT
from app.models.indextts.length_regulator import LengthRegulator
from app.models.indextts.qwen_emotion import MISSING, QwenEmotion
from app.models.indextts.semantic import SemanticEncoder
from app.models.indextts.text import TextFrontend
from app.models.indextts.weights import IndexFolder, check_folder, load_torch, state_of

Progress = Callable[[float, str], None]


@dataclass
class IndexModels:
    """The parts of one folder, on one device, in eval mode."""

    folder: IndexFolder
    text: TextFrontend
    semantic: SemanticEncoder
    campplus: CAMPPlus
    emotion: EmotionEncoder
    matrices: EmotionMatrices | None
    gpt: UnifiedGPT
    codec: SemanticCodec
    regulator: LengthRegulator
    dit: S2MelDiT
    vocoder: BigVGAN
    qwen: QwenEmotion | None

    @property
    def config(self) -> IndexConfig:
        return self.folder.config

    @property
    def device(self) -> torch.device:
        return self.gpt.mel_head.weight.device

    @classmethod
    def load(cls, model_dir: str | Path, device: str | torch.device = "cpu",
             progress: Progress | None = None) -> IndexModels:  # fmt: skip
        """Load every part of ``model_dir``; ``progress(fraction, what)`` is called before each."""
        folder = check_folder(model_dir)
        folder.require_speech()
        cfg = folder.config
        steps = iter(("text", "speech encoder", "speaker encoder", "GPT", "codec", "S2Mel", "vocoder",
                      "emotion model"))  # fmt: skip
        done = 0

        def step() -> None:
            nonlocal done
            if progress is not None:
                progress(done / 8, f"loading the {next(steps)}")
            done += 1

        step()
        text = TextFrontend(folder.root)
        step()
        semantic = SemanticEncoder(folder.w2v_bert, folder.w2v_stat, device)
        step()
        campplus = load_campplus(folder.campplus).to(device)
        step()
        gpt_state = state_of(load_torch(folder.gpt), "model", folder.gpt)
        gpt = UnifiedGPT.from_config(cfg.gpt)
        gpt.load(gpt_state)
        emotion = EmotionEncoder.from_config(cfg.gpt).load(gpt_state)
        del gpt_state
        matrices = EmotionMatrices.load(folder.root, cfg) if folder.emotion_vectors else None
        step()
        codec = SemanticCodec.from_config(cfg.semantic_codec).load(
            state_of(load_torch(folder.codec), "model", folder.codec))
        step()
        net = _net(folder.s2mel)
        lr_state = state_of(net, "length_regulator", folder.s2mel)
        regulator = LengthRegulator.from_config(cfg.s2mel).load(lr_state)
        dit = S2MelDiT.from_config(cfg.s2mel).load(state_of(net, "cfm", folder.s2mel))
        del net
        step()
        vocoder = BigVGAN.from_folder(folder.bigvgan)
        step()
        qwen = QwenEmotion(folder.qwen_emo) if folder.emotion_text else None
        if progress is not None:
            progress(1.0, "loaded")
        parts = [gpt, emotion, codec, regulator, dit, vocoder, campplus]
        for part in parts:
            part.to(device).eval().requires_grad_(False)
        return cls(folder, text, semantic, campplus, emotion, matrices, gpt, codec, regulator, dit, vocoder,
                   qwen)  # fmt: skip

    def require_matrices(self) -> EmotionMatrices:
        """The emotion matrices, or one line saying the folder lacks them."""
        if self.matrices is None:
            cfg = self.config
            raise VoxDeskError(f"Emotion vectors need the emotion matrices ({cfg.emo_matrix}, "
                               f"{cfg.spk_matrix}) of {self.folder.root}: download the complete model "
                               "folder, or give an emotion clip.")  # fmt: skip
        return self.matrices

    def require_qwen(self) -> QwenEmotion:
        """QwenEmotion, or one line saying the folder lacks it."""
        if self.qwen is None:
            raise VoxDeskError(MISSING.format(path=self.folder.qwen_emo))
        return self.qwen


def _net(path: Path) -> dict:
    """s2mel.pth's ``net`` table (``cfm`` and ``length_regulator``), or one line naming the file."""
    data = load_torch(path)
    net = data.get("net") if isinstance(data, dict) else None
    if not isinstance(net, dict):
        raise VoxDeskError(f"{path.name} in {path.parent} has no net table: download the model folder again.")
    return net
