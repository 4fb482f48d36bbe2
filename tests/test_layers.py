"""The package's layers, read from its source: every import of ``cute_gemm`` runs downward only,

    errors  <-  runtime  <-  measure  <-  profiling  <-  report  <-  cli

(a module imports its own layer and those to the left, never one to the right), the package's face
(``cute_gemm/__init__.py``) takes only ``errors`` up front, no two modules import each other in a circle,
the runtime never imports what only measuring, profiling or drawing needs, and ``phases/`` imports only
the DSL and itself. Then the same seen from a running interpreter: what ``import cute_gemm``, a first
``gemm()`` and ``cute-gemm --help`` load. A new module is checked by being in its folder."""

import ast
import os
import subprocess
import sys
import textwrap

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PKG = os.path.join(ROOT, "cute_gemm")
LAYERS = ("errors", "runtime", "nn", "measure", "profiling", "report", "cli")  # nn: torch modules on the runtime
# what only measuring, profiling or drawing needs: never imported by the runtime, not even inside a function
NOT_IN_RUNTIME = ("rich", "matplotlib", "pynvml", "triton", "quack", "PIL")
# the DSL and torch: the runtime imports them inside functions, but for the two modules that exist for them
HEAVY = ("torch", "cutlass", "tvm_ffi", "cuda")
HEAVY_AT_IMPORT = {"cute_gemm.runtime.compile", "cute_gemm.runtime.torch_ops"}


def _module_name(path: str) -> str:
    rel = os.path.relpath(path, ROOT)[:-3].replace(os.sep, ".")
    return rel[: -len(".__init__")] if rel.endswith(".__init__") else rel


def _sources(top: str):
    for folder, _, files in os.walk(top):
        for name in sorted(files):
            if name.endswith(".py"):
                yield os.path.join(folder, name)


def _imports(path: str):
    """(imported module, line, at module level) for every import statement of a file; ``from a import b``
    gives 'a.b' when a/b is a module of this checkout, else 'a'."""
    with open(path) as f:
        tree = ast.parse(f.read(), path)
    top_level = {id(node) for node in tree.body}
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(alias.name, node.lineno, id(node) in top_level) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, f"{path}:{node.lineno}: a relative import"
            for alias in node.names:
                sub = f"{node.module}.{alias.name}"
                as_path = os.path.join(ROOT, *sub.split("."))
                is_module = os.path.isfile(as_path + ".py") or os.path.isdir(as_path)
                out.append((sub if is_module else node.module, node.lineno, id(node) in top_level))
    return out


MODULES = {_module_name(p): _imports(p) for p in _sources(PKG)}


def _layer(module: str):
    """The index of a cute_gemm module's layer in LAYERS; None for the package's face and __main__."""
    parts = module.split(".")
    if len(parts) < 2 or parts[1] == "__main__":
        return None
    return LAYERS.index(parts[1])


def test_every_module_is_in_a_layer():
    for module in MODULES:
        parts = module.split(".")
        assert len(parts) == 1 or parts[1] in (*LAYERS, "__main__"), f"{module} is in no layer of {LAYERS}"


def test_imports_run_downward_only():
    upward = []
    for module, imports in MODULES.items():
        mine = _layer(module)
        for target, line, _ in imports:
            if target.split(".")[0] != "cute_gemm" or mine is None:
                continue
            theirs = _layer(target)
            if theirs is not None and theirs > mine:
                upward.append(f"{module}:{line} imports {target} ({LAYERS[mine]} -> {LAYERS[theirs]})")
    assert not upward, "\n".join(upward)


def test_the_face_takes_only_errors_up_front():
    for target, line, top in MODULES["cute_gemm"]:
        if target.startswith("cute_gemm") and top:
            assert target == "cute_gemm.errors", f"cute_gemm/__init__.py:{line} imports {target} at import time"
    for target, line, _ in MODULES["cute_gemm.errors"]:
        assert target.split(".")[0] in sys.stdlib_module_names or target == "__future__", (line, target)


def test_no_circle():
    graph = {m: {t for t, _, _ in imps if t in MODULES and t != m} for m, imps in MODULES.items()}
    state, path = {}, []

    def visit(m):
        state[m] = "open"
        path.append(m)
        for t in sorted(graph[m]):
            if state.get(t) == "open":
                pytest.fail("circle: " + " -> ".join(path[path.index(t):] + [t]))
            if t not in state:
                visit(t)
        path.pop()
        state[m] = "done"

    for m in sorted(graph):
        if m not in state:
            visit(m)


def test_the_runtime_imports_no_measurement_and_no_heavy_module_at_import():
    bad = []
    for module, imports in MODULES.items():
        if _layer(module) != LAYERS.index("runtime"):
            continue
        for target, line, top in imports:
            root = target.split(".")[0]
            if root in NOT_IN_RUNTIME:
                bad.append(f"{module}:{line} imports {target}")
            if top and root in HEAVY and module not in HEAVY_AT_IMPORT:
                bad.append(f"{module}:{line} imports {target} at import time (inside a function, please)")
            if top and target in HEAVY_AT_IMPORT:
                bad.append(f"{module}:{line} imports {target} at import time: it loads {root}")
    assert not bad, "\n".join(bad)


def test_phases_import_only_the_dsl_and_themselves():
    bad = []
    for path in _sources(os.path.join(ROOT, "phases")):
        for target, line, _ in _imports(path):
            root = target.split(".")[0]
            if root not in ("phases", "cutlass", "__future__") and root not in sys.stdlib_module_names:
                bad.append(f"{os.path.relpath(path, ROOT)}:{line} imports {target}")
    assert not bad, "\n".join(bad)


# ------------------------------------------------------------------------ seen from an interpreter
def _modules_after(code: str) -> set:
    probe = textwrap.dedent(code) + "\nimport sys\nprint(' '.join(sorted({m.split('.')[0] for m in sys.modules})))\n"
    env = {**os.environ, "PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")}
    out = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, env=env, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    return set(out.stdout.split())


def _loaded_after(code: str) -> set:
    """The top-level names of the modules a fresh interpreter has loaded after ``code``, beyond what a bare
    interpreter of this environment loads (site hooks, .pth files)."""
    return _modules_after(code) - _modules_after("pass")


def test_import_cute_gemm_loads_only_the_standard_library():
    third_party = {m for m in _loaded_after("import cute_gemm") if m not in sys.stdlib_module_names}
    assert third_party <= {"cute_gemm"}, third_party


def test_a_first_gemm_loads_no_measurement_module():
    """gemm() on CPU tensors: the runtime's whole call path runs to its InputError; nothing it loads on the
    way is a plotting, table, telemetry or peer library."""
    loaded = _loaded_after("""
        import torch, cute_gemm
        try:
            cute_gemm.gemm(torch.zeros(8, 8, dtype=torch.float16), torch.zeros(8, 8, dtype=torch.float16))
        except cute_gemm.InputError:
            pass
        else:
            raise SystemExit("no InputError for CPU tensors")
    """)
    assert "torch" in loaded and not loaded & set(NOT_IN_RUNTIME), loaded & set(NOT_IN_RUNTIME)


def test_a_ladder_loads_alone():
    loaded = _loaded_after("""
        import sys
        from cute_gemm.runtime import registry
        registry.get("sm90", "5")
        assert "phases.sm90.phase5_tma_store" in sys.modules and "phases.sm100" not in sys.modules
    """)
    assert "cutlass" in loaded and not loaded & set(NOT_IN_RUNTIME)


def test_help_loads_neither_torch_nor_the_dsl():
    loaded = _loaded_after("""
        import contextlib, io
        from cute_gemm.cli import main
        with contextlib.redirect_stdout(io.StringIO()):
            assert main(["--help"]) == 0
    """)
    assert not loaded & {"torch", "cutlass", "matplotlib", "numpy"}, loaded & {"torch", "cutlass", "matplotlib", "numpy"}
