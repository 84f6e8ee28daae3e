"""The image holds everything the app imports at run time (the image itself cannot be built here)."""

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RUNTIME = ("app.py", "calc", "ui", "pages")


def _copied() -> set[str]:
    text = (ROOT / "Dockerfile").read_text()
    return {m.group(1).rstrip("/") for m in re.finditer(r"^COPY\s+(\S+)\s+\S+", text, re.M)}


def _local_imports(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    local = {p.stem if p.is_file() else p.name for p in ROOT.iterdir()}
    return names & local


def test_runtime_code_and_config_are_copied():
    assert set(RUNTIME) | {".streamlit", "requirements.txt"} <= _copied()


def test_runtime_code_imports_only_copied_code():
    files = [ROOT / "app.py"] + [p for d in RUNTIME[1:] for p in (ROOT / d).rglob("*.py")]
    imported = set().union(*(_local_imports(f) for f in files))
    assert imported <= {"calc", "ui", "pages"}, imported
