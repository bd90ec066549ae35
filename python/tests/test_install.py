"""The documented install (docs/python.md): `pip install build/python` into a fresh virtual
environment, then the notebook example in it, printing the kill rate `ttlpred eval` prints."""
import json
import os
import pathlib
import re
import subprocess
import sys

import pytest

import ttlpred
from conftest import ROOT, cli

PACKAGE_DIR = pathlib.Path(ttlpred.__file__).resolve().parents[1]  # build/python


def test_fresh_venv_install_and_notebook(tmp_path, kth):
    if not (PACKAGE_DIR / "pyproject.toml").exists():
        pytest.skip(f"{PACKAGE_DIR} is not the CMake-built package folder")
    venv = tmp_path / "venv"
    # Debian's numpy and pandas come from the system site; nothing is downloaded.
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", venv], check=True)
    py = venv / "bin" / "python"
    subprocess.run([py, "-m", "pip", "install", "--no-index", "--no-build-isolation", "--quiet", PACKAGE_DIR],
                   check=True)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # the venv's copy, not the build's
    where = subprocess.run([py, "-c", "import ttlpred; print(ttlpred.__file__)"], check=True, capture_output=True,
                           text=True, env=env, cwd=tmp_path).stdout
    assert str(venv) in where
    out = subprocess.run([py, ROOT / "python" / "examples" / "notebook.py", kth], check=True, capture_output=True,
                         text=True, env=env, cwd=tmp_path).stdout
    kill_rate = float(re.search(r"kill rate (\S+)", out).group(1))
    rmse = float(re.search(r"RMSE h (\S+)", out).group(1))
    ref = json.loads(cli("eval", "--model", tmp_path / "kth.ttlp", "--data", kth, "--split", 0.8, "--json"))
    assert kill_rate == ref["kill_rate"] and rmse == ref["rmse_hours"]
