"""The pronunciation list: find → replace rules applied to each segment before synthesis.

A rule is plain text (matched literally) or a regular expression (the ``regex`` package, whose
default syntax is Python's ``re``; the replacement may use ``\\1`` / ``\\g<name>``). Rules run in
list order, each on the previous one's output; disabled rules and rules with nothing to find are
skipped. A broken pattern raises a :class:`VoxDeskError` naming the rule, so the user knows which
one to fix.

A user's pattern can backtrack for ever (``(a|aa)+$``), so every match runs with a time limit
(:data:`TIMEOUT_S`, the ``regex`` package's ``timeout``): a rule that runs out of time is skipped
from then on and described in :attr:`PronunciationList.problems`, and the text goes on without it.
"""

from __future__ import annotations

import logging
import re
from dataclasses import asdict, dataclass, fields
from typing import Any

import regex

from app.errors import VoxDeskError

log = logging.getLogger(__name__)
TIMEOUT_S = 0.1  # per rule and segment; a sane rule takes microseconds


@dataclass(frozen=True)
class Rule:
    """One find → replace rule."""

    find: str
    replace: str = ""
    regex: bool = False
    case_sensitive: bool = False
    whole_word: bool = False  # plain rules only: do not match inside a longer word
    enabled: bool = True

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Rule:
        """Build a rule from saved JSON; unknown keys are ignored, missing ones take defaults."""
        known = {f.name for f in fields(cls)}
        kwargs = {k: v for k, v in data.items() if k in known}
        if not isinstance(kwargs.get("find"), str) or not isinstance(kwargs.get("replace", ""), str):
            raise VoxDeskError("A pronunciation rule in this file is damaged. Fix or remove it.")
        for name in ("regex", "case_sensitive", "whole_word", "enabled"):
            if name in kwargs:
                kwargs[name] = bool(kwargs[name])
        return cls(**kwargs)


def _label(index: int, rule: Rule) -> str:
    return f'Pronunciation rule {index + 1} ("{rule.find}")'


def compile_rule(rule: Rule, index: int = 0) -> regex.Pattern:
    """The compiled pattern of ``rule``; raises VoxDeskError naming the rule when it is invalid."""
    flags = 0 if rule.case_sensitive else re.IGNORECASE
    if rule.regex:
        source = rule.find
    else:
        source = re.escape(rule.find)
        if rule.whole_word:
            source = rf"(?<!\w){source}(?!\w)"
    try:
        # The syntax (pattern and replacement) is Python's re, checked by re itself: regex parses a
        # replacement only at the first match. The regex package then runs it, with a time limit.
        checked = re.compile(source, flags)
        if rule.regex:
            checked.sub(rule.replace, "")  # parses the replacement template: bad \3 fails here
        pattern = regex.compile(source, regex.IGNORECASE if flags else 0)
    except (re.error, regex.error) as err:
        raise VoxDeskError(
            f"{_label(index, rule)} is not a valid regular expression: {err.msg}. "
            "Fix it, or untick “regex” to match the text literally."
        ) from None
    if pattern.fullmatch("", timeout=TIMEOUT_S):
        raise VoxDeskError(
            f"{_label(index, rule)} matches empty text, so it would insert its replacement everywhere. "
            "Make the pattern match at least one character."
        )
    return pattern


class PronunciationList:
    """An ordered list of rules, compiled once, applied to every segment."""

    def __init__(self, rules: list[Rule] | None = None) -> None:
        self.rules: list[Rule] = list(rules or [])
        self._compiled: list[tuple[regex.Pattern, Rule]] | None = None
        self.problems: list[str] = []  # rules skipped because they ran out of time

    def set_rules(self, rules: list[Rule]) -> None:
        """Replace all rules (the UI's table writes through this)."""
        self.rules = list(rules)
        self._compiled = None
        self.problems = []

    def validate(self) -> None:
        """Compile every enabled rule now; raises VoxDeskError for the first broken one."""
        self._patterns()

    def _patterns(self) -> list[tuple[regex.Pattern, Rule]]:
        if self._compiled is None:
            self._compiled = [
                (compile_rule(rule, i), rule)
                for i, rule in enumerate(self.rules)
                if rule.enabled and rule.find
            ]
        return self._compiled

    def apply(self, text: str) -> str:
        """``text`` with every enabled rule applied in order (a rule that times out is dropped)."""
        compiled = self._patterns()
        for entry in list(compiled):
            pattern, rule = entry
            replacement = rule.replace if rule.regex else (lambda _m, r=rule.replace: r)
            try:
                text = pattern.sub(replacement, text, timeout=TIMEOUT_S)
            except TimeoutError:
                compiled.remove(entry)
                index = self.rules.index(rule)
                message = (
                    f"{_label(index, rule)} took too long on “{text[:40]}” (its pattern can backtrack "
                    "without end), so it was skipped. Simplify it in Pronunciation."
                )
                log.warning(message)
                self.problems.append(message)
        return text

    def take_problems(self) -> list[str]:
        """The problems found since the last call."""
        out, self.problems = self.problems, []
        return out

    def to_list(self) -> list[dict[str, Any]]:
        """JSON-ready form (a list of rule dicts)."""
        return [rule.to_dict() for rule in self.rules]

    @classmethod
    def from_list(cls, data: list[dict[str, Any]] | None) -> PronunciationList:
        """The inverse of :meth:`to_list`; tolerant of unknown keys."""
        if data is None:
            return cls()
        if not isinstance(data, list) or not all(isinstance(d, dict) for d in data):
            raise VoxDeskError("The pronunciation list in this file is damaged. Recreate the rules.")
        return cls([Rule.from_dict(d) for d in data])
