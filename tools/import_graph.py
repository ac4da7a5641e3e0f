"""The import graph of src/shareval, from the code's own imports (function-level
ones included): cycles between modules, the pairs of platform apps that import
each other, and how many imports sit inside functions.

    python tools/import_graph.py [SRC]      # SRC defaults to src/shareval
"""
from __future__ import annotations

import ast
import sys
from collections import defaultdict
from pathlib import Path


def module_name(path: Path, src: Path) -> str:
    parts = list(path.relative_to(src.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports(path: Path, name: str, is_pkg: bool):
    """(target, inside_function) for every shareval import in the file."""
    tree = ast.parse(path.read_text(), str(path))
    base = name.split(".") if is_pkg else name.split(".")[:-1]
    funcs = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            funcs.update(id(n) for n in ast.walk(node) if n is not node)
    for node in ast.walk(tree):
        inner = id(node) in funcs
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith("shareval"):
                    yield a.name, inner
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                mod = ".".join(base[:len(base) - node.level + 1] + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            if not mod.startswith("shareval"):
                continue
            for a in node.names:
                yield (f"{mod}.{a.name}", inner)


def graph(src: Path):
    mods = {module_name(p, src): p for p in src.rglob("*.py") if "migrations" not in p.parts}
    edges, inner = defaultdict(set), 0
    for name, path in mods.items():
        for target, in_func in imports(path, name, path.name == "__init__.py"):
            while target and target not in mods:
                target = target.rpartition(".")[0]
            if target and target != name:
                edges[name].add(target)
                inner += in_func and "platform" in name
    return mods, edges, inner


def cycles(nodes, edges):
    """Strongly connected components with more than one member (Tarjan)."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        work = [(v, iter(edges.get(v, ())))]
        index[v] = low[v] = counter[0]; counter[0] += 1; stack.append(v); on.add(v)
        while work:
            node, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]; counter[0] += 1; stack.append(w); on.add(w)
                    work.append((w, iter(edges.get(w, ()))))
                    break
                if w in on:
                    low[node] = min(low[node], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    comp = []
                    while True:
                        w = stack.pop(); on.discard(w); comp.append(w)
                        if w == node:
                            break
                    if len(comp) > 1:
                        out.append(sorted(comp))
    for v in nodes:
        if v not in index:
            visit(v)
    return out


def app_of(mod: str) -> str | None:
    parts = mod.split(".")
    if len(parts) >= 3 and parts[1] == "platform":
        return parts[2]
    return None


def main(argv):
    src = Path(argv[1] if len(argv) > 1 else "src/shareval").resolve()
    mods, edges, inner = graph(src)
    comps = cycles(list(mods), edges)
    print(f"modules: {len(mods)}; import cycles: {len(comps)}")
    for c in comps:
        print(f"  cycle of {len(c)}: " + ", ".join(m.removeprefix("shareval.") for m in c))
    pairs = defaultdict(int)
    for a, targets in edges.items():
        for b in targets:
            x, y = app_of(a), app_of(b)
            if x and y and x != y:
                pairs[(x, y)] += 1
    both = sorted({tuple(sorted(p)) for p in pairs if (p[1], p[0]) in pairs})
    print(f"platform app pairs importing each other both ways: {len(both)}")
    for x, y in both:
        print(f"  {x} <-> {y} ({pairs[(x, y)]} / {pairs[(y, x)]} modules)")
    print(f"imports inside functions in platform/: {inner}")
    print("app -> app imports (modules):")
    for (x, y), n in sorted(pairs.items()):
        print(f"  {x} -> {y}: {n}")


if __name__ == "__main__":
    main(sys.argv)
