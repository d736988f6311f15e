"""VoxDesk core: model, engine, audio, voices and CLI. Never imports Qt."""
