"""The one exception type whose message is shown to the user."""


class VoxDeskError(Exception):
    """A failure the user can act on.

    ``str(err)`` is a single plain-language line that says what happened and what to do;
    the CLI prints it and the window shows it in a dialog. Tracebacks go to the log only.
    """


class UsageError(VoxDeskError):
    """A command-line option given wrong: a bad value, or one the loaded model cannot honour.

    The CLI prints it as one line and exits 2, as for argparse's own usage errors."""
