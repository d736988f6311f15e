"""``voxdesk book`` end to end: an EPUB (built with ebooklib) → chapter MP3s and an M4B in --out;
the same command again continues (here: nothing left to speak) and exports again."""

from __future__ import annotations

from test_book_import import make_epub  # noqa: E402
from test_ui_book import PNG  # noqa: E402

from app.cli import main
from app.longform.project import read_log


def test_book_command_speaks_and_exports_then_resumes(tmp_path, tiny_v2, capsys):
    source = make_epub(tmp_path / "keeper.epub", image=PNG)
    out = tmp_path / "out"
    args = ["book", str(source), "--model", str(tiny_v2), "--device", "cpu", "--seed", "5", "--out", str(out)]
    assert main(args) == 0
    printed = capsys.readouterr().out
    assert "The Lighthouse Keeper by Ada Writer: 3 chapters" in printed
    mp3s = sorted(out.glob("*.mp3"))
    m4bs = list(out.glob("*.m4b"))
    assert len(mp3s) == 3 and len(m4bs) == 1
    assert all(str(p) in printed for p in [*mp3s, *m4bs])
    made = len(read_log(out))
    assert main([*args[:-4], "--formats", "m4b", "--out", str(out)]) == 0
    assert "Resuming: 3 of 3 chapters done" in capsys.readouterr().out
    assert len(read_log(out)) == made  # nothing spoken again


def test_bad_formats_are_one_line(tmp_path, tiny_v2, capsys):
    source = make_epub(tmp_path / "keeper.epub")
    assert (
        main(["book", str(source), "--model", str(tiny_v2), "--formats", "wav", "--out", str(tmp_path / "o")])
        == 1
    )
    err = capsys.readouterr().err
    assert "--formats takes mp3, m4b or both" in err and err.count("\n") == 1
