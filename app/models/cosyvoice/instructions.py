"""The instructions CosyVoice3 was trained to follow (instruct2 mode), offered as suggestions.

What the user types is only the instruction; VoxDesk adds the system prompt and
``<|endofprompt|>`` around it (app/models/cosyvoice/text.py), so these are the middle parts of the
official list (``cosyvoice/utils/common.py`` ``instruct_list`` at FunAudioLLM/CosyVoice ace7c47).
They are model input, in the language the model was trained on, and are never translated.
"""

from __future__ import annotations

_DIALECTS = ("广东", "东北", "甘肃", "贵州", "河南", "湖北", "湖南", "江西", "闽南", "宁夏", "山西", "陕西",
             "山东", "上海", "四川", "天津", "云南")  # fmt: skip

SUGGESTIONS: tuple[str, ...] = (
    *(f"请用{d}话表达。" for d in _DIALECTS),
    "Please say a sentence as loudly as possible.",
    "Please say a sentence in a very soft voice.",
    "请用尽可能慢地语速说一句话。",
    "请用尽可能快地语速说一句话。",
    "请非常开心地说一句话。",
    "请非常伤心地说一句话。",
    "请非常生气地说一句话。",
    "我想体验一下小猪佩奇风格，可以吗？",
    "你可以尝试用机器人的方式解答吗？",
)
