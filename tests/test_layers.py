"""The package's architecture, checked: imports point down the layers, no cycles, no private reach-ins.

Layers, lowest first (CONTRIBUTING.md, "Layers"): errors/version → knowledge → settings → readers → model →
passes → api → compare → views → render → batch → cli → the package facade. A module may import
its own layer or a lower one. Every import counts: module level, inside functions, and under
`TYPE_CHECKING`.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "ncu_roofline"
LAYERS = ["errors", "version", "knowledge", "settings", "readers", "model", "passes", "api", "compare",
          "views", "render", "batch", "cli", "__init__", "__main__"]
RANK = {name: (0 if name in ("errors", "version") else LAYERS.index(name) - 1) for name in LAYERS}
MAX_LINES = 500
# The wording catalog is data, one entry per kind and variant: it grows with the findings, and is kept whole so
# that every word lives in one place (its own tests keep each entry within its limits).
DATA_MODULES = frozenset({"knowledge/catalog.py"})


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _layer(module: str) -> str:
    parts = module.split(".")
    if len(parts) == 1:
        return "__init__"
    return parts[1]


def _imports(module: str, path: Path, known: set[str]) -> list[tuple[str, list[str], int]]:
    """(imported module, names, line) for every intra-package import of `module`."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    is_package = path.name == "__init__.py"
    out: list[tuple[str, list[str], int]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".") if is_package else module.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if not target.startswith("ncu_roofline"):
                continue
            names = [a.name for a in node.names]
            # `from pkg import submodule` imports the submodule.
            subs = [f"{target}.{n}" for n in names if f"{target}.{n}" in known]
            if subs:
                out.extend((s, [], node.lineno) for s in subs)
                names = [n for n in names if f"{target}.{n}" not in known]
                if not names:
                    continue
            out.append((target, names, node.lineno))
        elif isinstance(node, ast.Import):
            out.extend((a.name, [], node.lineno) for a in node.names if a.name.startswith("ncu_roofline"))
    return out


def _graph() -> dict[str, list[tuple[str, list[str], int]]]:
    mods = _modules()
    return {m: _imports(m, p, set(mods)) for m, p in mods.items()}


def test_imports_point_down_the_layers() -> None:
    wrong = []
    for module, imports in _graph().items():
        for target, _names, line in imports:
            if RANK[_layer(target)] > RANK[_layer(module)]:
                wrong.append(f"{module}:{line} imports {target} ({_layer(module)} -> {_layer(target)})")
    assert not wrong, "\n".join(wrong)


def test_no_import_cycles() -> None:
    graph = {m: sorted({t for t, _, _ in imports if t != m}) for m, imports in _graph().items()}
    state: dict[str, int] = {}
    cycles: list[list[str]] = []

    def visit(node: str, stack: list[str]) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in graph.get(node, []):
            if state.get(nxt) == 1:
                cycles.append([*stack[stack.index(nxt):], nxt])
            elif nxt not in state:
                visit(nxt, stack)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node, [])
    assert not cycles, "\n".join(" -> ".join(c) for c in cycles)


def test_no_module_reaches_into_private_names() -> None:
    wrong = []
    for module, imports in _graph().items():
        for target, names, line in imports:
            if target == module:
                continue
            private = [n for n in names if n.startswith("_") and not n.startswith("__")]
            if private:
                wrong.append(f"{module}:{line} imports {', '.join(private)} from {target}")
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("path", sorted(PACKAGE.rglob("*.py")), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_modules_stay_small(path: Path) -> None:
    lines = len(path.read_text(encoding="utf-8").splitlines())
    if str(path.relative_to(PACKAGE)) in DATA_MODULES:
        pytest.skip("a data module: the wording catalog")
    assert lines <= MAX_LINES, f"{path.name} has {lines} lines; split it where it holds several steps"


def test_every_module_says_what_it_is() -> None:
    missing = [m for m, p in _modules().items() if ast.get_docstring(ast.parse(p.read_text(encoding="utf-8"))) is None]
    assert not missing, missing
