"""The README's example and the pipeline example run as written."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from conftest import ROOT

README = Path(__file__).resolve().parents[1] / "README.md"
PIPELINE = ROOT / "examples" / "python" / "pipeline.py"


def test_readme_example_runs(capsys) -> None:  # type: ignore[no-untyped-def]
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
    assert blocks, "README.md has no python example"
    for block in blocks:
        exec(compile(block, str(README), "exec"), {"__name__": "readme"})
    printed = capsys.readouterr().out
    assert "{'awarded': 1, 'possible': 2, 'max': 2}" in printed
    assert "uncertain_decision /questions/0/decisions/1/outcome" in printed
    assert "/schemaVersion: " in printed and "(const)" in printed


def test_pipeline_example_runs() -> None:
    result = subprocess.run([sys.executable, str(PIPELINE)], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "valid, needs_review: 7-8 of 8 marks" in out
    assert "question 7: 7-8 of 8 (needs_review)" in out
    assert "uncertain_decision at /questions/0/decisions/5/outcome" in out
    assert "reported_score_mismatch at /questions/0/reportedScore/awarded" in out
    assert "completion_claim_overridden at /questions/0/complete" in out
    flawed = out.split("flawed marking step:")[1]
    assert "rejected: 2 error(s)" in flawed
    assert "/questions/0/decisions/0/evidence/0/pageId: " in flawed
    assert "(asset_role_mismatch)" in flawed
    assert "/questions/0/rubric/criteria/4: " in flawed and "(missing_decision)" in flawed
