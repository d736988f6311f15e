"""Read ``cosyvoice2.yaml`` / ``cosyvoice3.yaml`` as data, never as code.

The official folders describe their networks in HyperPyYAML, whose tags build Python objects
while the file is read: ``!new:pkg.Class`` constructs, ``!name:pkg.func`` binds a callable,
``!apply:pkg.func [args]`` calls it, ``!ref <key>`` refers to another entry. The official loader
(``load_hyperpyyaml``) imports and runs whatever a file names. This reader parses the same text
with PyYAML's ``SafeLoader`` and keeps each tag as a :class:`Tag` (its kind, the dotted name it
names and its arguments as plain data): nothing is imported, constructed or called.

- ``!new:`` and ``!name:`` are recorded whatever they name; only the three networks' class names
  are checked, to tell the family (:func:`parse_config`).
- ``!apply:`` is the tag that runs code at load time. The released yamls use it only to seed the
  random generators (``random.seed``, ``numpy.random.seed``, ``torch.manual_seed``,
  ``torch.cuda.manual_seed_all``): those are recorded (the seed matters, the official modules draw
  noise tables at construction) and any other ``!apply:`` refuses the file.
- ``!ref <a>`` resolves to entry ``a``; ``!ref <a> * <b>`` allows + - * / // % on numbers only
  (evaluated over a parsed expression tree, not ``eval``).
- Every other tag (``!!python/object``, ``!include``, ``!copy``, ...), YAML anchors and aliases,
  a file over 1 MiB or nested deeper than 64 levels: refused with one line naming the file.
"""

from __future__ import annotations

import ast
import operator
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from app.errors import VoxDeskError

MAX_BYTES = 1 << 20
MAX_DEPTH = 64
SEEDERS = ("random.seed", "numpy.random.seed", "torch.manual_seed", "torch.cuda.manual_seed_all")
FAMILIES = {
    "cosyvoice2": ("cosyvoice.llm.llm.Qwen2LM", "cosyvoice.flow.flow.CausalMaskedDiffWithXvec",
                   "cosyvoice.hifigan.generator.HiFTGenerator"),
    "cosyvoice3": ("cosyvoice.llm.llm.CosyVoice3LM", "cosyvoice.flow.flow.CausalMaskedDiffWithDiT",
                   "cosyvoice.hifigan.generator.CausalHiFTGenerator"),
}  # fmt: skip


@dataclass(frozen=True)
class Tag:
    """A HyperPyYAML object tag kept as data: ``kind`` is ``new``, ``name`` or ``apply``;
    ``target`` the dotted name it names; ``args`` its mapping (keyword) or list (positional)."""

    kind: str
    target: str
    args: Any = field(default_factory=dict)

    def get(self, key: str, default: Any = None) -> Any:
        return self.args.get(key, default) if isinstance(self.args, dict) else default


@dataclass(frozen=True)
class Ref:
    """An unresolved ``!ref`` expression, e.g. ``<chunk_size> * <token_mel_ratio>``."""

    expr: str


class _ConfigError(Exception):
    pass


class _Loader(yaml.SafeLoader):
    """SafeLoader that records the HyperPyYAML tags and refuses anchors and aliases."""

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node | None:
        if self.check_event(yaml.AliasEvent):
            mark = self.peek_event().start_mark
            raise _ConfigError(f"line {mark.line + 1}: YAML aliases are not read")
        event = self.peek_event()
        if getattr(event, "anchor", None):
            raise _ConfigError(f"line {event.start_mark.line + 1}: YAML anchors are not read")
        return super().compose_node(parent, index)


def _args(loader: _Loader, node: yaml.Node) -> Any:
    if isinstance(node, yaml.MappingNode):
        return loader.construct_mapping(node, deep=True)
    if isinstance(node, yaml.SequenceNode):
        return loader.construct_sequence(node, deep=True)
    value = loader.construct_scalar(node)
    return [value] if value not in ("", None) else {}


def _object_tag(kind: str):
    def construct(loader: _Loader, suffix: str, node: yaml.Node) -> Tag:
        if not re.fullmatch(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*", suffix):
            raise _ConfigError(f"line {node.start_mark.line + 1}: '!{kind}:{suffix}' is not a dotted name")
        if kind == "apply" and suffix not in SEEDERS:
            raise _ConfigError(f"line {node.start_mark.line + 1}: '!apply:{suffix}' would run code when read")
        return Tag(kind, suffix, _args(loader, node))

    return construct


def _ref(loader: _Loader, node: yaml.Node) -> Ref:
    return Ref(str(loader.construct_scalar(node)))


# HyperPyYAML reads YAML 1.2, where ``1e-06`` is a float; PyYAML's 1.1 resolver wants a dot.
_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^[-+]?(?:[0-9][0-9_]*)(?:\.[0-9_]*)?[eE][-+]?[0-9]+$"),
    list("-+0123456789"),
)
for _kind in ("new", "name", "apply"):
    _Loader.add_multi_constructor(f"!{_kind}:", _object_tag(_kind))
_Loader.add_constructor("!ref", _ref)

_OPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
        ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod}  # fmt: skip


def _arith(node: ast.AST) -> int | float:
    if isinstance(node, ast.Expression):
        return _arith(node.body)
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        value = _arith(node.operand)
        return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
        return _OPS[type(node.op)](_arith(node.left), _arith(node.right))
    raise _ConfigError("a !ref expression may only combine numbers with + - * / // %")


class _Resolver:
    """Replaces :class:`Ref` values by what they refer to (top-level keys, dotted for nesting)."""

    def __init__(self, root: dict[str, Any]) -> None:
        self.root = root
        self.active: set[str] = set()

    def lookup(self, name: str) -> Any:
        if name in self.active:
            raise _ConfigError(f"!ref <{name}> refers to itself")
        node: Any = self.root
        for part in name.split("."):
            if not isinstance(node, dict) or part not in node:
                raise _ConfigError(f"!ref <{name}> names no entry")
            node = node[part]
        self.active.add(name)
        try:
            return self.resolve(node, 0)
        finally:
            self.active.discard(name)

    def expr(self, text: str) -> Any:
        names = re.findall(r"<([^<>]+)>", text)
        if not names:
            raise _ConfigError(f"!ref '{text}' names no entry")
        if re.fullmatch(r"\s*<[^<>]+>\s*", text):
            return self.lookup(names[0])
        values = {n: self.lookup(n) for n in names}
        for n, v in values.items():
            if type(v) not in (int, float):
                raise _ConfigError(f"!ref '{text}': <{n}> is not a number")
        source = re.sub(r"<([^<>]+)>", lambda m: repr(values[m.group(1)]), text)
        try:
            return _arith(ast.parse(source, mode="eval"))
        except (SyntaxError, ZeroDivisionError) as exc:
            raise _ConfigError(f"!ref '{text}': {exc}") from None

    def resolve(self, node: Any, depth: int) -> Any:
        if depth > MAX_DEPTH:
            raise _ConfigError(f"nested deeper than {MAX_DEPTH} levels")
        if isinstance(node, Ref):
            return self.expr(node.expr)
        if isinstance(node, Tag):
            return Tag(node.kind, node.target, self.resolve(node.args, depth + 1))
        if isinstance(node, dict):
            return {k: self.resolve(v, depth + 1) for k, v in node.items()}
        if isinstance(node, list):
            return [self.resolve(v, depth + 1) for v in node]
        return node


def read_yaml(path: str | Path, overrides: dict[str, Any] | None = None) -> dict[str, Any]:
    """The yaml at ``path`` as plain data with its tags recorded and its ``!ref`` resolved.

    ``overrides`` replace top-level entries before resolution, as the official loader's
    ``overrides`` do (it sets ``qwen_pretrain_path``). A bad file raises :class:`VoxDeskError`.
    """
    p = Path(path)
    try:
        if p.stat().st_size > MAX_BYTES:
            raise VoxDeskError(f"{p.name} is larger than 1 MiB: not a CosyVoice config.")
        text = p.read_bytes().decode("utf-8")
    except OSError as exc:
        raise VoxDeskError(f"Cannot read {p} ({exc.strerror or exc}).") from None
    except UnicodeDecodeError:
        raise VoxDeskError(f"{p.name} is not UTF-8 text: not a CosyVoice config.") from None
    try:
        doc = yaml.load(text, Loader=_Loader)  # noqa: S506 - _Loader is a SafeLoader
        if not isinstance(doc, dict) or not all(isinstance(k, str) for k in doc):
            raise _ConfigError("the top level is not a mapping of names")
        doc.update(overrides or {})
        return _Resolver(doc).resolve(doc, 0)
    except _ConfigError as exc:
        raise VoxDeskError(f"{p.name}: {exc}; nothing in it was run.") from None
    except (yaml.YAMLError, RecursionError) as exc:
        line = getattr(getattr(exc, "problem_mark", None), "line", None)
        where = f" (line {line + 1})" if line is not None else ""
        reason = getattr(exc, "problem", None) or type(exc).__name__
        message = f"{p.name} is not a config VoxDesk reads{where}: {reason}; nothing in it was run."
        raise VoxDeskError(message) from None


@dataclass(frozen=True)
class CosyVoiceConfig:
    """What inference needs from the yaml; ``tree`` keeps the whole resolved document."""

    family: str
    sample_rate: int
    seed: int | None
    llm: Tag
    flow: Tag
    hift: Tag
    tree: dict[str, Any]

    @property
    def sampling(self) -> dict[str, Any]:
        """``ras_sampling``'s keywords: top_p, top_k, win_size, tau_r."""
        tag = self.llm.get("sampling")
        return dict(tag.args) if isinstance(tag, Tag) and isinstance(tag.args, dict) else {}

    @property
    def speech_token_size(self) -> int:
        return int(self.llm.get("speech_token_size"))


def parse_config(tree: dict[str, Any], name: str = "config") -> CosyVoiceConfig:
    """The family and the three network sections of a resolved yaml (see :func:`read_yaml`)."""
    parts = [tree.get(k) for k in ("llm", "flow", "hift")]
    if not all(isinstance(t, Tag) and t.kind == "new" for t in parts):
        raise VoxDeskError(f"{name} has no llm, flow and hift sections: not a CosyVoice2/3 config.")
    targets = tuple(t.target for t in parts)  # type: ignore[union-attr]
    family = next((f for f, names in FAMILIES.items() if names == targets), None)
    if family is None:
        described = ", ".join(targets)
        raise VoxDeskError(f"{name} describes {described}: VoxDesk reads CosyVoice2 and CosyVoice3 only.")
    seeds = [t for k, t in tree.items() if isinstance(t, Tag) and t.kind == "apply" and k.startswith("__")]
    seed = next((int(t.args[0]) for t in seeds if t.target == "torch.manual_seed" and t.args), None)
    rate = tree.get("sample_rate")
    if type(rate) is not int or rate <= 0:
        raise VoxDeskError(f"{name}: sample_rate is missing or not a positive whole number.")
    return CosyVoiceConfig(family, rate, seed, parts[0], parts[1], parts[2], tree)  # type: ignore[arg-type]


def load_config(path: str | Path) -> CosyVoiceConfig:
    """:func:`read_yaml` then :func:`parse_config`, for ``cosyvoice2.yaml`` / ``cosyvoice3.yaml``."""
    return parse_config(read_yaml(path), Path(path).name)
