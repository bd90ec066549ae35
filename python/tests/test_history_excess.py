"""scripts/history-excess.py, the diagnosis behind docs/ACCURACY.md's "Where the network
loses to its own history": its replay counts a job's finished (production, job type)
siblings and their work rate leak-free, checked on hand-placed jobs."""
import importlib.util
import math

import numpy as np
import pandas as pd
import pytest

from conftest import ROOT

_spec = importlib.util.spec_from_file_location("history_excess", ROOT / "scripts" / "history-excess.py")
history_excess = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(history_excess)

NAN = float("nan")
# job, production, type, submit, wait, wall, events, input_files, host speed
JOBS = [
    ("A", "P", "MC", 0, 0, 100, 10, NAN, 1.0),       # starts 0, ends 100: 10 s per event
    ("B", "P", "MERGE", 0, 0, 50, NAN, 5, 1.0),      # ends 50: another job type of P
    ("C", "P", "MC", 10, 100, 200, 20, NAN, 2.0),    # starts 110: sees A (and B, of another type)
    ("D", "P", "MC", 20, 80, 300, 5, NAN, 1.0),      # starts 100, when A ends: A counts
    ("E", "P", "MC", 5, 0, 400, 8, NAN, 1.0),        # starts 5: nothing of P has finished
    ("F", "", "USER", 30, 0, 60, NAN, 2, 1.0),       # no production: no key
    ("G", "P", "MERGE", 300, 0, 10, NAN, 2, 4.0),    # starts 300: sees B (10 s per file)
]


def _table():
    t = pd.DataFrame(JOBS, columns=["job", "production_tag", "job_type", "submit_time", "wait_s", "wall_s", "events",
                                    "input_files", "host_speed"])
    t["production_tag"] = t.production_tag.replace("", np.nan)
    t["input_bytes"] = NAN
    return t


def test_match_time_counts_only_finished_jobs_of_the_same_production_and_type():
    n_at, est = history_excess.replay(_table(), "match")
    assert list(n_at) == [0, 0, 1, 1, 0, 0, 1]
    # C: A's 100 s / 10 events = 10 s per event, times C's 20 events / speed 2
    assert est[2] == pytest.approx(100.0)
    # D: A ended exactly at D's start, so it counts: 10 s per event x 5 events
    assert est[3] == pytest.approx(50.0)
    # G: B's 50 s / 5 files = 10 s per file, times G's 2 files / speed 4
    assert est[6] == pytest.approx(5.0)
    assert all(math.isnan(est[i]) for i in (0, 1, 4, 5))


def test_submit_time_sees_less_than_match_time():
    n_at, est = history_excess.replay(_table(), "submit")
    # C and D are submitted at 10 and 20, before A ends (100): nothing yet; G at 300 sees B
    assert list(n_at) == [0, 0, 0, 0, 0, 0, 1]
    assert est[6] == pytest.approx(5.0) and math.isnan(est[2])
