"""benchmarks/scaling.py runs end to end (tiny sizes, figures not checked): one row per case and size, the
first switch changed the file and the second did not, the memory figure is the switch's own, and the HOME
it was started with stays empty."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "scaling.py"


def test_scaling_runs_every_case_in_a_throw_away_home(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    environ = {**os.environ, "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config")}
    argv = [sys.executable, str(SCRIPT), "--sizes", "0.02", "--cases", "codex,qwen-env", "--runs", "2", "--json"]
    done = subprocess.run(argv, env=environ, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)
    assert [r["case"] for r in rows] == ["codex", "qwen-env"]
    for row in rows:
        assert row["bytes"] >= 20_000 and row["first_s"] > 0 and row["again_s"] > 0
        assert 10_000_000 < row["rss"] < 1_000_000_000  # the switch process's own peak, not this test's
        assert row["first_changed"] and row["again_unchanged"]
        assert row["first_p25"] <= row["first_p75"] and row["again_p25"] <= row["again_p75"]
    assert list(home.iterdir()) == []


def test_scaling_markdown_is_a_table():
    sys.path.insert(0, str(SCRIPT.parent))
    import scaling

    row = {"case": "codex", "bytes": 2_000_000, "first_s": 1.0, "again_s": 0.5, "peak": 8_000_000}
    rows = [row, {**row, "first_p25": 0.9, "first_p75": 1.2, "again_p25": 0.4, "again_p75": 0.6}]
    lines = scaling.markdown(rows, 3).splitlines()
    # a README block (benchmarks/readme.py puts it between its markers): the markers, what was measured, the table
    assert lines[0] == "<!-- scaling-benchmark -->" and lines[-1] == "<!-- /scaling-benchmark -->"
    assert "benchmarks/scaling.py" in lines[1] and "of 3 runs each" in lines[1]
    table = lines[lines.index("") + 1 : -1]
    assert table[0].startswith("| file | MB |") and table[2] == "| codex | 2.0 | 1.00 | 0.50 | 0.50 | 8 | 4.0 |"
    assert table[3] == "| codex | 2.0 | 1.00 (0.90–1.20) | 0.50 | 0.50 (0.40–0.60) | 8 | 4.0 |"
