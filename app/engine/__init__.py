"""The VoxDesk engine: continuous batching of VoxCPM requests over paged KV caches."""

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
