"""The "Train this voice…" wizard: a recording in, a fine-tuned (LoRA) voice in the library out.

The training itself is ``app.train`` (Qt-free); this package is its window: the pages, the worker
threads that run preparation and training off the GUI thread, and the run folders that let a run
left by a close, a quit or a crash be resumed at the next start.
"""
