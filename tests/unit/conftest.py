"""Unit test modules import shared helpers from _streams.py (importlib mode puts no test dir on
sys.path)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
