"""VoxDesk core: model, engine, audio, voices and CLI. Never imports Qt."""

__version__ = "0.1.0"
