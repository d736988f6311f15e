"""IndexTTS-2.5's text frontend: what the official ``infer`` hands to the GPT for a text.

The vocabulary (and the tiny one the test folders hold: 700 ranks + 1673 specials = 2373 ids)
lives in :mod:`app.models.indextts.vocab`.
"""

from __future__ import annotations

from app.models.indextts.vocab import write_tiny_vocab

__all__ = ["write_tiny_vocab"]
