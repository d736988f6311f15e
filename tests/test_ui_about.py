"""Help › About names the version (the same one ``voxdesk --version`` prints)."""

from __future__ import annotations

from ui_fixtures import ScriptedDialogs, home, open_window  # noqa: F401

from app.version import version


def test_about_shows_the_version(qtbot, home):  # noqa: F811
    dialogs = ScriptedDialogs()
    window = open_window(qtbot, None, dialogs)
    window.actions.dialog.reject()  # the first-run model manager
    window.actions.about()
    assert dialogs.infos[-1].startswith(f"Version {version()}\n\n")
    assert "entirely on this computer" in dialogs.infos[-1]
