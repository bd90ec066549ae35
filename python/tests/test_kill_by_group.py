"""scripts/kill-by-group.py, the per-group check of docs/ACCURACY.md's "Per group, three seeds":
its join of a backtest's per-job file back to the trace, and the kill rates per group, on a
hand-written SWF log and per-job file."""
import json
import subprocess
import sys

import pytest

from conftest import ROOT

SCRIPT = ROOT / "scripts" / "kill-by-group.py"

# SWF fields: job submit wait run procs cpu mem req_procs req_time req_mem status user group exe queue partition prec think
SWF = """; UnixStartTime: 1000
1 0 0 100 1 -1 -1 1 200 -1 1 7 1 1 1 2 -1 -1
2 10 0 150 1 -1 -1 1 200 -1 1 7 1 1 1 2 -1 -1
3 20 0 0 1 -1 -1 1 200 -1 1 8 1 1 1 2 -1 -1
4 30 0 180 1 -1 -1 1 200 -1 1 8 1 1 2 3 -1 -1
5 40 0 250 1 -1 -1 1 200 -1 1 8 1 1 2 3 -1 -1
6 5 0 50 1 -1 -1 1 200 -1 1 7 1 1 1 2 -1 -1
"""
# Eligible in submit order (job 3 has no run time): 1 (1000), 6 (1005), 2 (1010), 4 (1030), 5 (1040).
HEADER = "split,submit_s,wait_s,wall_s,requested_s,user_q99_s,pred_s,ttl_aci-capped\n"
PER_JOB = HEADER + "".join([
    "0.2,1005,0,50,200,,40,60\n",    # job 6, user 7: not killed
    "0.2,1010,0,150,200,,90,120\n",  # job 2, user 7: killed (150 > 120, <= 200)
    "0.6,1030,0,180,200,,100,170\n",  # job 4, user 8: killed
    "0.6,1040,0,250,200,,100,150\n",  # job 5, user 8: ran past its request: not a kill
])


def _run(tmp_path, per_job, *args):
    (tmp_path / "t.swf").write_text(SWF)
    (tmp_path / "p.csv").write_text(per_job)
    return subprocess.run([sys.executable, str(SCRIPT), str(tmp_path / "t.swf"), str(tmp_path / "p.csv"), *args],
                          capture_output=True, text=True)


def test_kill_rates_per_group_against_hand_counts(tmp_path):
    r = _run(tmp_path, PER_JOB, "--min-jobs", "2", "--json")
    assert r.returncode == 0, r.stderr
    [f] = json.loads(r.stdout)
    assert f["jobs"] == 4 and f["kill_rate"] == pytest.approx(0.5)
    rates = {(g["column"], g["value"]): (g["jobs"], g["kill_rate"]) for g in f["groups"]}
    assert rates[("user", "7")] == (2, pytest.approx(0.5))
    assert rates[("user", "8")] == (2, pytest.approx(0.5))
    assert rates[("queue", "1")] == (2, pytest.approx(0.5))
    assert rates[("partition", "3")] == (2, pytest.approx(0.5))
    assert ("group", "1") in rates and rates[("group", "1")] == (4, pytest.approx(0.5))
    assert len(f["above_2_alpha"]) == len(f["groups"])  # 50 % is above 2 % everywhere


def test_min_jobs_leaves_small_groups_out(tmp_path):
    r = _run(tmp_path, PER_JOB, "--min-jobs", "3", "--json")
    [f] = json.loads(r.stdout)
    assert [(g["column"], g["value"]) for g in f["groups"]] == [("group", "1")]


def test_a_file_of_another_trace_is_an_error_naming_the_split(tmp_path):
    r = _run(tmp_path, HEADER + "0.6,1030,0,999,200,,100,170\n")
    assert r.returncode != 0
    assert "split 0.6" in r.stderr
