"""The calculator stays UI-free: nothing in calc/ imports streamlit or plotly."""

import ast
from pathlib import Path

CALC = Path(__file__).resolve().parents[1] / "calc"


def test_calc_imports_no_ui_libraries():
    offenders = []
    for path in CALC.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            offenders += [f"{path.name}: {n}" for n in names if n.split(".")[0] in ("streamlit", "plotly")]
    assert offenders == []


def test_cli_commands_do_not_import_the_entry_point():
    """calc/cli: the commands (estimate, plan, simulate) and the shared modules (args, report)
    never import calc.cli.main, which imports them: no cycle (issue #19)."""
    offenders = []
    for path in (CALC / "cli").glob("*.py"):
        if path.name in ("main.py", "__init__.py"):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module == "calc.cli.main":
                offenders.append(f"{path.name}:{node.lineno}")
    assert offenders == []
