"""Long-form work: subtitles dubbed to their timing, books."""
