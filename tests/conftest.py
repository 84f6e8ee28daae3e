"""Shared test fixtures: repository root on sys.path, the app path."""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
APP = str(ROOT / "app.py")
SHARED = ROOT.parent / "shared"
