#!/usr/bin/env python3
"""Each job's safe TTL from an exported model's sidecar alone, as a serving stack outside
ttlpred would compute it from the expected wall time (the graph's output, decoded as the
sidecar's `target` says) and, for a model with quantile heads, the quantile of the head the
rule names and whether the job is a cold start (`upper_s` and `cold`, which predict prints
for such a model): the rule of docs/interop.md, "The sidecar", in plain Python.
Compares with what `ttlpred predict` answered for the same jobs and exits 1 when any job
differs by more than predict's own rounding: it prints times to 0.1 s, and the safe TTL
moves at most in proportion to the expected time (a relative 0.05 s / expected, at most),
so the bound is that share of the safe TTL plus 0.1 s.

usage: sidecar_safe_ttl.py SIDECAR.json TRACE.csv PREDICT.csv [ALPHA [MIN_SECONDS [MAX_TTL]]]
(ALPHA 0.01, MIN_SECONDS 60 and MAX_TTL 259200 are predict's defaults.)"""
import bisect
import csv
import json
import math
import sys


def table_safe_ttl(table, expected_s, request_s, alpha):
    """The request-aware rule: a point on the log-scale road from the prediction to the request."""
    floor = table["floor_s"]
    p = max(min(expected_s, request_s), floor)
    ratio_bin = bisect.bisect_right(table["ratio_edges"], p / request_s)
    at = bisect.bisect_right(table["alphas"], alpha * (1 + 1e-9))
    q = 1.0 if at == 0 else table["exponents"][at - 1][ratio_bin]
    if not request_s > p or q >= 1.0:
        return request_s
    return min(request_s, p * math.exp(q * math.log(request_s / p)))


def quantile_safe_ttl(rule, expected_s, upper_s, request_s, group, cold, alpha):
    """The per-job rule: the head's quantile times the margin of its group (or of cold starts)."""
    at = rule["alphas"].index(alpha)
    if cold:
        margin = rule["cold_log_margin"][at]
    else:
        margin = next((g["log_margin"][at] for g in rule["groups"] if g["group"] == group and not g.get("fallback")),
                      rule["global_log_margin"][at])
    t = max(expected_s, upper_s * math.exp(margin))
    return min(t, request_s) if request_s > 0 else t


def safe_ttl(st, expected_s, request_s, group, alpha):
    if request_s > 0 and st["request_aware"]:
        table = st["request_aware_table"]
        for own in st.get("request_aware_by_key", []):
            if not own["fallback"] and own.get("group") == group:
                table = own["table"]
        t = table_safe_ttl(table, expected_s, request_s, alpha)
    else:
        margins = next((g["log_margin"] for g in st["groups"] if g["group"] == group and not g.get("fallback")),
                       st["global_log_margin"])
        margin = margins[st["alphas"].index(alpha)]
        t = max(expected_s, st["floor_s"]) * math.exp(margin)
    t = max(t, expected_s)
    return min(t, request_s) if request_s > 0 else t


def bounded(value_s, request_s, min_seconds, max_ttl):
    """predict's bounds: at least MIN_SECONDS, at most the request, else at most MAX_TTL."""
    v = max(value_s, min_seconds)
    if request_s > 0:
        return min(v, request_s)
    return min(v, max_ttl) if max_ttl > 0 else v


def main(argv):
    sidecar = json.load(open(argv[1]))
    alpha = float(argv[4]) if len(argv) > 4 else 0.01
    min_seconds = float(argv[5]) if len(argv) > 5 else 60.0
    max_ttl = float(argv[6]) if len(argv) > 6 else 259200.0
    st = sidecar["safe_ttl"]
    vocabulary = next((c["vocabulary"] for c in sidecar["encoder"]["categories"] if c["field"] == st["group_column"]), [])
    index = {v: i + 1 for i, v in enumerate(vocabulary)}
    jobs = {row["job_id"]: row for row in csv.DictReader(open(argv[2]))}
    worst, checked = 0.0, 0
    for answer in csv.DictReader(open(argv[3])):
        job = jobs[answer["job_id"]]
        request = float(job["requested_ttl_s"] or 0)
        expected = float(answer["expected_wall_s"])
        group = index.get(job.get(st["group_column"], ""), 0)
        want = float(answer["safe_ttl_s"])
        if "quantile" in st and answer.get("upper_s"):
            raw = quantile_safe_ttl(st["quantile"], expected, float(answer["upper_s"]), request, group,
                                    answer["cold"] == "1", alpha)
        else:
            raw = safe_ttl(st, expected, request, group, alpha)
        got = bounded(raw, request, min_seconds, max_ttl)
        off = abs(got - want)
        if off > want * 0.05 / max(expected, 1.0) + 0.1:
            print(f"job {answer['job_id']}: the sidecar's rule gives {got:.1f} s, predict answered {want:.1f} s")
            return 1
        worst, checked = max(worst, off / want), checked + 1
    print(f"{checked} jobs: the sidecar's safe TTL equals predict's, largest relative difference {worst:.2g}")
    return 0 if checked else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
