"""Long-form work: books and subtitles spoken end to end."""
