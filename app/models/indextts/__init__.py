"""IndexTTS-2.5 (index-tts/index-tts, infer_v2_5.py) rebuilt for VoxDesk: config, weights, parts."""
