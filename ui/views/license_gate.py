"""The model manager's one way of accepting a licence before a download or a folder's use.

A permissive licence passes. One without texts of its own (SenseVoice Small's) is asked about once,
by a question. An agreement published as files (IndexTTS-2.5's bilibili agreement) is shown in full
in :class:`LicenseDialog`, from the files fetched on the manager's worker thread (only they) or read
from the chosen folder, whenever those texts differ from the ones accepted. Every acceptance is
recorded where ``voxdesk models download`` records it (app/models/licenses.py); declining runs
nothing and keeps nothing. Strings keep the manager's translation context.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QCoreApplication
from PySide6.QtWidgets import QDialog, QWidget

from app.models import licenses
from ui.dialogs import Dialogs
from ui.views.license_dialog import LicenseDialog

Action = Callable[[], None]
Texts = list[licenses.LicenseText]
# (job on a worker thread, what to do with its result on the GUI thread)
Runner = Callable[[Callable[[], Texts], Callable[[Texts], None]], None]


def _tr(text: str) -> str:
    return QCoreApplication.translate("ModelManager", text)


class LicenseGate:
    def __init__(self, parent: QWidget, dialogs: Dialogs, language: Callable[[], str],
                 say: Callable[[str], None], changed: Action) -> None:  # fmt: skip
        self.parent, self.dialogs, self.language = parent, dialogs, language
        self.say, self.changed = say, changed
        self.dialog: LicenseDialog | None = None  # the one open now

    def check(self, key: str, title: str, terms: licenses.License, then: Action | None,
              fetch: Callable[[], Texts] | None = None, run: Runner | None = None,
              texts: Texts | None = None, always: bool = False) -> None:  # fmt: skip
        """Run ``then`` once ``terms`` are accepted for the model ``key``: ``texts`` are the
        agreement's files as read now, or ``fetch`` reads them (``run`` runs it on the manager's
        worker); ``always`` shows them even when accepted as they are."""
        if terms.permissive:
            if then is not None:
                then()
            return
        if not terms.texts or (fetch is None and not texts):  # nothing to show: the question, once
            if licenses.accepted(key, terms):
                if then is not None:
                    then()
                return
            question = _tr("{0} comes under the {1} ({2}), which is not a permissive licence. "
                           "Do you accept it?").format(title, terms.name, terms.url)  # fmt: skip
            if not self.dialogs.confirm(self.parent, question):
                self.say(_tr("Licence not accepted: nothing was downloaded."))
                return
            licenses.record_acceptance(key, terms)
            if then is not None:
                then()
            return
        if texts is None:
            assert fetch is not None and run is not None
            run(fetch, lambda got: self._show(key, title, terms, got, then, always))
            return
        self._show(key, title, terms, texts, then, always)

    def _show(self, key: str, title: str, terms: licenses.License, texts: Texts, then: Action | None,
              always: bool) -> None:  # fmt: skip
        if licenses.accepted(key, terms, texts) and not always:
            if then is not None:
                then()
            return
        shown = licenses.for_language(texts, self.language())
        before = licenses.accepted_on(key, terms) if licenses.accepted(key, terms) else None
        changed = before if before is not None and not licenses.accepted(key, terms, texts) else None
        dialog = LicenseDialog(title, terms, shown, changed, self.parent)
        self.dialog = dialog

        def answered(result: int) -> None:
            self.dialog = None
            if result != QDialog.DialogCode.Accepted:
                self.say(_tr("Licence not accepted: nothing was downloaded."))
                return
            licenses.record_acceptance(key, terms, texts, shown)
            self.say(_tr("Licence accepted."))
            self.changed()
            if then is not None:
                then()

        dialog.finished.connect(answered)
        dialog.open()
