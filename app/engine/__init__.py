"""The VoxDesk engine: continuous batching over paged KV caches, for any model family
(:mod:`app.engine.family`; the families live in :mod:`app.models`)."""

from app.engine.config import EngineConfig
from app.engine.engine import Engine
from app.engine.events import AudioChunk, RequestFailed, RequestFinished, RequestRetried
from app.engine.request import SynthRequest

__all__ = [
    "AudioChunk",
    "Engine",
    "EngineConfig",
    "RequestFailed",
    "RequestFinished",
    "RequestRetried",
    "SynthRequest",
]
