"""The VoxCPM model family (VoxCPM-0.5B, VoxCPM1.5, VoxCPM2): our own implementation.

Entry points: ``weights.load_model`` (strict loading), ``tokenizer.TextTokenizer``,
``model.VoxCPM`` (batch-first step functions shared with ``app/engine``),
``prompt.VoicePrompt`` / ``prompt.build_prefill``, ``generate.Synthesizer`` (the one-request
streaming loop), ``runner.load`` (the family's runner behind the engine, app/engine/family.py)
and ``checkpoint.write_checkpoint`` (random checkpoints for tests).
Nothing is imported here, so importing the package stays cheap.
"""
