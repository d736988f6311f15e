"""The speech models the model manager offers: where each one lives, what of it VoxDesk downloads,
its size before a server has listed the files, and its licence.

Qt-free and network-free: app/models/download.py lists and fetches what an entry names.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from app.models.licenses import APACHE_2, BILIBILI_MODEL, License


@dataclass(frozen=True)
class Part:
    """Files of another repository that a model folder needs, and where they go in it (IndexTTS-2.5
    loads w2v-BERT 2.0, CAMPPlus and BigVGAN from its ``hf_cache/``)."""

    title: str
    hf_repo: str
    ms_repo: str
    files: tuple[tuple[str, str], ...]  # (path in that repository, path in the model folder)


@dataclass(frozen=True)
class Extra:
    """An optional folder of the model's own repository: left out of the download unless asked
    for, and downloadable into an installed model folder later."""

    key: str  # the command line's name for it (``voxdesk models download <key>``)
    title: str
    folder: str  # in the repository and in the model folder
    approx_mb: int

    def installed_in(self, model_dir: Path) -> bool:
        """Whether ``model_dir`` holds this part's weights."""
        return any((model_dir / self.folder).glob("*.safetensors"))


@dataclass(frozen=True)
class KnownModel:
    key: str  # folder name under the models folder
    title: str
    hf_repo: str
    ms_repo: str
    architecture: str
    output_rate: int
    # What the model manager shows before a server has listed the files: the weights of the
    # official architecture at their released dtypes (bf16 network, fp32 AudioVAE), in MB, from
    # ``preset_config`` (tests/test_download.py checks it); the exact size replaces it once known.
    approx_mb: int
    license: License = APACHE_2  # the weights' licence (model card)
    family: str = "voxcpm"  # app.engine.family's name for its folders
    # the repository files VoxDesk downloads (paths in the repository); empty:
    # everything :func:`select_files` keeps. CosyVoice repositories also carry TensorRT/ONNX
    # copies of the flow, a second LM and the Qwen weights that llm.pt replaces: gigabytes unused.
    files: tuple[str, ...] = ()
    parts: tuple[Part, ...] = ()  # other repositories' files the folder needs
    extras: tuple[Extra, ...] = ()  # optional folders, downloaded only when asked for

    def extra(self, key: str) -> Extra:
        """The optional part called ``key`` (a KeyError names a programming error)."""
        return next(e for e in self.extras if e.key == key)


def _cosyvoice_files(version: int) -> tuple[str, ...]:
    """What inference reads from a CosyVoice folder (app/models/cosyvoice/weights.py checks it):
    the yaml, the three networks, the two ONNX frontends and the text tokenizer's files."""
    return (
        f"cosyvoice{version}.yaml", "llm.pt", "flow.pt", "hift.pt", "campplus.onnx",
        f"speech_tokenizer_v{version}.onnx", "config.json", "CosyVoice-BlankEN/config.json",
        "CosyVoice-BlankEN/vocab.json", "CosyVoice-BlankEN/merges.txt",
        "CosyVoice-BlankEN/tokenizer_config.json",
    )  # fmt: skip


COSYVOICE_FILES = {"cosyvoice2": _cosyvoice_files(2), "cosyvoice3": _cosyvoice_files(3)}

# IndexTTS-2.5's folder (docs/indextts_plan.md section 2, app/models/indextts/weights.py): its own
# repository's files (config.yaml names the GPT, S2Mel, statistics and matrices; codec.pth and the
# tiktoken vocabulary have fixed names; LICENSE stays beside them, as the licence's section 3.4 b
# asks), and under hf_cache/ what the official code fetches at its first start, from the
# repositories (and ModelScope ids) its utils/model_download.py names.
INDEXTTS_PARTS = (
    Part("w2v-BERT 2.0", "facebook/w2v-bert-2.0", "AI-ModelScope/w2v-bert-2.0",
         tuple((f, f"hf_cache/w2v-bert-2.0/{f}")
               for f in ("config.json", "preprocessor_config.json", "model.safetensors"))),
    Part("CAMPPlus", "funasr/campplus", "iic/speech_campplus_sv_zh-cn_16k-common",
         (("campplus_cn_common.bin", "hf_cache/campplus_cn_common.bin"),)),
    Part("BigVGAN v2", "nvidia/bigvgan_v2_22khz_80band_256x", "nvidia/bigvgan_v2_22khz_80band_256x",
         tuple((f, f"hf_cache/bigvgan/{f}") for f in ("config.json", "bigvgan_generator.pt"))),
)  # fmt: skip
# Reads an emotion from a sentence (config.yaml's qwen_emo_path); about 1.5 GB: Qwen3-0.6B's 752 M
# values at 16 bits (its output layer stored beside the embeddings, as Qwen/Qwen3-0.6B publishes
# them) plus its 15 MB tokenizer. An estimate: the repository's listing was not readable from here.
QWEN_EMOTION = Extra(
    "IndexTTS-2.5-QwenEmotion", "QwenEmotion (emotion from a sentence)", "qwen0.6bemo4-merge", 1518
)

KNOWN_MODELS = (
    KnownModel(
        "VoxCPM2",
        "VoxCPM2 (2B, 30 languages, 48 kHz)",
        "openbmb/VoxCPM2",
        "OpenBMB/VoxCPM2",
        "voxcpm2",
        48000,
        4957,
    ),
    KnownModel(
        "VoxCPM1.5", "VoxCPM1.5 (44.1 kHz)", "openbmb/VoxCPM1.5", "OpenBMB/VoxCPM1.5", "voxcpm", 44100, 1949
    ),
    KnownModel(
        "VoxCPM-0.5B",
        "VoxCPM-0.5B (16 kHz)",
        "openbmb/VoxCPM-0.5B",
        "OpenBMB/VoxCPM-0.5B",
        "voxcpm",
        16000,
        1606,
    ),
    # Sizes are estimates until a source lists the files: the official networks' parameter
    # counts at fp32 (llm.pt, flow.pt, hift.pt) plus the ONNX and tokenizer files' sizes on the
    # model pages, rounded. The exact total replaces them once listed.
    KnownModel(
        "Fun-CosyVoice3-0.5B",
        "Fun-CosyVoice3 (0.5B, 9 languages, 18+ dialects, 24 kHz)",
        "FunAudioLLM/Fun-CosyVoice3-0.5B-2512",
        "FunAudioLLM/Fun-CosyVoice3-0.5B-2512",
        "cosyvoice3",
        24000,
        4480,
        family="cosyvoice",
        files=COSYVOICE_FILES["cosyvoice3"],
    ),
    KnownModel(
        "CosyVoice2-0.5B",
        "CosyVoice2 (0.5B, zh/en/ja/ko and dialects, 24 kHz)",
        "FunAudioLLM/CosyVoice2-0.5B",
        "iic/CosyVoice2-0.5B",
        "cosyvoice2",
        24000,
        3080,
        family="cosyvoice",
        files=COSYVOICE_FILES["cosyvoice2"],
    ),
    # The size (without QwenEmotion) is the released shapes' values at fp32 (official_shapes.json:
    # GPT 815 M, S2Mel 103 M, codec 51 M, CAMPPlus 7 M, BigVGAN 112 M; w2v-BERT 2.0 580 M) plus
    # about 1 MB of statistics, matrices and vocabulary; tests/test_indextts_download.py checks it.
    KnownModel(
        "IndexTTS-2.5",
        "IndexTTS-2.5 (zh/en/ja/es/ar, emotion control, 22 kHz)",
        "IndexTeam/IndexTTS-2.5",
        "IndexTeam/IndexTTS-2.5",
        "indextts25",
        22050,
        6674,
        license=BILIBILI_MODEL,
        family="indextts",
        parts=INDEXTTS_PARTS,
        extras=(QWEN_EMOTION,),
    ),
)


def model_for_family(family: str) -> KnownModel | None:
    """The catalogue entry whose licence binds a folder of ``family`` when its text asks to be
    accepted (IndexTTS-2.5), else None."""
    return next((m for m in KNOWN_MODELS if m.family == family and m.license.texts), None)
