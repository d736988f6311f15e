"""The bundle build's own imports come with the bundle build.

``pyinstaller.spec`` runs the self-test folder writers (``app/selftest.py``) at build time, in a
venv that holds only the app's dependencies and its ``bundle`` extra (``installer/build_*.sh``).
A writer importing a package of the ``test`` extra alone broke every bundle build once (``onnx``,
for the CosyVoice folder's tiny ``.onnx`` files): here every module those writers can import, in
``app`` and at any depth of function, is held to what that venv installs.
"""

from __future__ import annotations

import ast
import importlib.metadata as md
import re
import sys
from pathlib import Path

import pytest
from packaging.requirements import Requirement

tomllib = pytest.importorskip("tomllib")
ROOT = Path(__file__).resolve().parents[1]
# imported only where importlib.util.find_spec found it (app/engine/attention.py)
OPTIONAL = {"flash_attn"}


def _canon(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _spec_writers() -> set[str]:
    """The ``app.selftest`` functions pyinstaller.spec calls."""
    return set(re.findall(r"^(write_selftest_\w+)\(", (ROOT / "pyinstaller.spec").read_text(), re.M))


def _guarded(handler: ast.ExceptHandler) -> bool:
    names = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return any(isinstance(n, ast.Name) and n.id in ("ImportError", "ModuleNotFoundError") for n in names)


def _imports(node: ast.AST, module: str) -> set[str]:
    """Every module an import under ``node`` names (relative ones resolved against ``module``),
    but not those in a ``try`` that catches ImportError (optional: flash-attn, Triton)."""
    found = set()
    todo = [node]
    while todo:
        sub = todo.pop()
        if isinstance(sub, ast.Try) and any(_guarded(h) for h in sub.handlers):
            todo += sub.handlers + sub.orelse + sub.finalbody
            continue
        if isinstance(sub, ast.If) and "TYPE_CHECKING" in ast.unparse(sub.test):
            todo += sub.orelse  # imports for the type checker only never run
            continue
        todo += list(ast.iter_child_nodes(sub))
        if isinstance(sub, ast.Import):
            found |= {a.name for a in sub.names}
        elif isinstance(sub, ast.ImportFrom):
            base = sub.module or ""
            if sub.level:
                base = ".".join(module.split(".")[: -sub.level] + ([base] if base else []))
            found.add(base)
            found |= {f"{base}.{a.name}" for a in sub.names}  # a submodule imported by name
    return found


def _source(module: str) -> Path | None:
    path = ROOT.joinpath(*module.split("."))
    for candidate in (path.with_suffix(".py"), path / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def build_time_imports() -> set[str]:
    """The top-level third-party modules the spec's writers can reach through ``app``."""
    tree = ast.parse((ROOT / "app" / "selftest.py").read_text())
    todo = set()
    writers = _spec_writers()
    for node in tree.body:  # the module's own imports run too when the spec imports the writers
        definition = isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
        if not definition or node.name in writers:
            todo |= _imports(node, "app.selftest")
    seen, outside = set(), set()
    while todo:
        name = todo.pop()
        top = name.split(".")[0]
        if top not in ("app", "ui"):
            outside.add(top)
            continue
        if name in seen:
            continue
        seen.add(name)
        parts = name.split(".")
        todo |= {".".join(parts[:i]) for i in range(1, len(parts))}  # parent packages run first
        source = _source(name)
        if source is not None:
            # a package's relative imports resolve against the package itself
            where = f"{name}.__init__" if source.stem == "__init__" else name
            todo |= _imports(ast.parse(source.read_text()), where)
    return {m for m in outside if m and m not in sys.stdlib_module_names | OPTIONAL | {"__future__"}}


def bundle_venv() -> set[str]:
    """The distributions the bundle venv gets: the dependencies and the ``bundle`` extra, with
    theirs (as installed here)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    todo = [Requirement(r) for r in project["dependencies"] + project["optional-dependencies"]["bundle"]]
    have: set[str] = set()
    while todo:
        req = todo.pop()
        if req.marker is not None and not req.marker.evaluate({"extra": ""}):
            continue
        name = _canon(req.name)
        if name in have:
            continue
        have.add(name)
        try:
            todo += [Requirement(r) for r in md.requires(req.name) or []]
        except md.PackageNotFoundError:
            pass  # not installed here (a platform's own): it brings nothing this test can see
    return have


def test_the_writers_imports_are_installed_by_the_bundle_build():
    assert _spec_writers() >= {"write_selftest_model", "write_selftest_cosyvoice"}
    modules = build_time_imports()
    assert {"torch", "numpy", "onnx"} <= modules  # the walk reaches the writers' own imports
    providers = md.packages_distributions()
    venv = bundle_venv()
    missing = {
        m: providers.get(m, ["?"]) for m in modules if not venv & {_canon(d) for d in providers.get(m, [])}
    }
    assert not missing, f"imported at bundle build time, not installed by .[bundle]: {missing}"
