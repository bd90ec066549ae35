"""Fixtures of the pytest suite: the `ttlpred` program built beside the module (the reference
every Python answer is compared with), a small synthetic ALICE trace, and a model trained on
it by the CLI. Paths come from the environment ctest sets (python/CMakeLists.txt), or default
to the release build folder."""
import os
import pathlib
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
BIN = os.environ.get("TTLPRED_BIN", str(ROOT / "build" / "ttlpred"))
SHARED = pathlib.Path(os.environ.get("TTLPRED_SHARED_DIR", str(ROOT.parent / "shared")))
KTH = SHARED / "data" / "traces" / "KTH-SP2__log.swf"

# Model files stamp their creation time to the second (model/creation_time.hpp): tests that
# compare two trainings' bytes would differ whenever a second boundary fell between them (as
# they did now and then in the slow coverage build). A fixed SOURCE_DATE_EPOCH makes every
# training here, in this process and in the CLI it runs, stamp the same time.
os.environ["SOURCE_DATE_EPOCH"] = "1700000000"

# A small, fast model: the round trips test equality, not accuracy. One training thread keeps
# the CLI's and Python's training runs identical.
TRAIN_ARGS = ["--hidden", "32,32", "--epochs", "2", "--threads", "1", "--seed", "7", "--quiet"]
TRAIN_OPTIONS = dict(hidden="32,32", epochs=2, threads=1, seed=7, quiet=True)


def cli(*args, **kw):
    """Runs the ttlpred program; returns its standard output (text)."""
    done = subprocess.run([BIN, *map(str, args)], check=True, capture_output=True, text=True, **kw)
    return done.stdout


@pytest.fixture(scope="session")
def workdir(tmp_path_factory):
    return tmp_path_factory.mktemp("ttlpred")


@pytest.fixture(scope="session")
def alice_csv(workdir):
    path = workdir / "alice.csv"
    cli("generate", "--jobs", 4000, "--seed", 3, "--out", path)
    return path


@pytest.fixture(scope="session")
def alice_model(workdir, alice_csv):
    path = workdir / "alice.ttlp"
    cli("train", "--data", alice_csv, "--out", path, "--split", 0.8, *TRAIN_ARGS)
    return path


@pytest.fixture(scope="session")
def kth():
    if not KTH.exists():
        pytest.skip(f"{KTH} absent (the shared data folder lives beside the checkout)")
    return KTH
