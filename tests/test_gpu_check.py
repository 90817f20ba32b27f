"""The GPU check script stays runnable where there is no GPU: shellcheck-clean, and its dry run passes."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parent.parent / "benchmarks" / "gpu_check.sh"


@pytest.mark.skipif(shutil.which("shellcheck") is None, reason="shellcheck is not installed")
def test_the_gpu_check_script_is_shellcheck_clean():
    subprocess.run(["shellcheck", str(SCRIPT)], check=True)


def test_the_gpu_check_dry_run_checks_every_phase(tmp_path):
    env = {**os.environ, "DRY_RUN": "1", "PYTHON": sys.executable}
    result = subprocess.run(["bash", str(SCRIPT), str(tmp_path)], env=env, capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    log = (tmp_path / "gpu_check.log").read_text()
    assert "dry run finished; failures: none" in log
    assert "minigrad sees a GPU:" in log
