"""The MATERIAL scanner loads numba without its scipy.linalg probe (formats/_numba_start.py)."""
import ast
import subprocess
import sys
from pathlib import Path

import shareval

SRC = Path(shareval.__file__).parent


def test_scanning_does_not_import_scipy_linalg_and_it_still_imports_afterwards():
    code = ("import sys, numpy as np\n"
            "from shareval.formats.scan import doc_table, scan_file\n"
            "t = doc_table(['a', 'b'])\n"
            "s = scan_file(b'a\\tY\\t0.5\\nb\\tN\\t0.1\\n', t, np.ones(2, bool), 3)\n"
            "assert s.ticks.tolist() == [50000, 10000], s\n"
            "assert 'scipy.linalg' not in sys.modules, 'numba probed BLAS'\n"
            "import scipy.linalg\n"
            "assert scipy.linalg.norm([3.0, 4.0]) == 5.0\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr


def test_no_compiled_function_of_shareval_uses_linear_algebra():
    """numba then compiles no np.dot/np.linalg: a jitted function using them would fail
    in a process that scanned MATERIAL files first."""
    offenders = []
    for path in SRC.rglob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef) and any(
                    "njit" in ast.unparse(d) or "jit" in ast.unparse(d)
                    for d in node.decorator_list):
                body = ast.unparse(node)
                if any(w in body for w in ("dot(", "linalg", "matmul", " @ ", "vdot(", "outer(")):
                    offenders.append(f"{path}:{node.lineno} {node.name}")
    assert not offenders, offenders
