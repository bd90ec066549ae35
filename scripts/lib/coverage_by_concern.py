#!/usr/bin/env python3
"""Line coverage per concern folder of src/, from gcovr's JSON summary, held against floors.

    coverage_by_concern.py SUMMARY.json FLOORS.txt

Prints one row per concern (lines, covered, coverage, floor) and the total. Exits 1 when a
concern is below its floor, when a concern has no floor (a new folder gets one when it
arrives, so that nothing enters uncounted), or when a floor under 70 % has no reason
written beside it. A concern with a floor but no measured lines (not built in this
configuration, e.g. peers without oneDNN) is reported, not failed. FLOORS.txt: one `concern percent [# reason]` a line; `#` starts a
comment.
"""
import json
import sys

MIN_FLOOR_WITHOUT_REASON = 70.0


def read_floors(path):
    floors, problems = {}, []
    with open(path, encoding="utf-8") as f:
        for number, raw in enumerate(f, 1):
            text, _, reason = raw.partition("#")
            fields = text.split()
            if not fields:
                continue
            where = f"{path}:{number}"
            if len(fields) != 2:
                problems.append(f"{where}: expected 'concern percent [# reason]', got {raw.strip()!r}")
                continue
            try:
                floor = float(fields[1])
            except ValueError:
                problems.append(f"{where}: floor {fields[1]!r} is not a number")
                continue
            if not 0.0 <= floor <= 100.0:
                problems.append(f"{where}: floor {floor} is outside [0, 100]")
            if floor < MIN_FLOOR_WITHOUT_REASON and not reason.strip():
                problems.append(f"{where}: a floor under {MIN_FLOOR_WITHOUT_REASON:.0f} % needs a reason after '#'")
            if fields[0] in floors:
                problems.append(f"{where}: concern {fields[0]!r} appears twice")
            floors[fields[0]] = floor
    return floors, problems


def by_concern(summary_path):
    files = json.load(open(summary_path, encoding="utf-8"))["files"]
    by = {}
    for f in files:
        parts = f["filename"].split("/")
        concern = parts[1] if len(parts) > 2 and parts[0] == "src" else parts[0]
        t = by.setdefault(concern, [0, 0])
        t[0] += f["line_covered"]
        t[1] += f["line_total"]
    return by


def main(argv):
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    by = by_concern(argv[1])
    floors, problems = read_floors(argv[2])

    def pct(c, t):
        return 100.0 * c / t if t else 100.0

    print(f"| {'concern':<9} | {'lines':>6} | {'covered':>7} | {'coverage':>8} | {'floor':>6} |")
    print(f"|{'-' * 11}|{'-' * 7}:|{'-' * 8}:|{'-' * 9}:|{'-' * 7}:|")
    for concern in sorted(by):
        c, t = by[concern]
        floor = floors.get(concern)
        shown = f"{floor:.1f}%" if floor is not None else "none"
        print(f"| {concern:<9} | {t:>6} | {c:>7} | {pct(c, t):>7.1f}% | {shown:>6} |")
        if floor is None:
            problems.append(f"{concern}: no floor in {argv[2]} (add one: today's figure rounded down)")
        elif pct(c, t) < floor:
            problems.append(f"{concern}: {pct(c, t):.1f}% of lines covered, below its floor of {floor:.1f}%")
    covered = sum(v[0] for v in by.values())
    total = sum(v[1] for v in by.values())
    print(f"| {'total':<9} | {total:>6} | {covered:>7} | {pct(covered, total):>7.1f}% | {'':>6} |")
    # A concern not built here (peers without oneDNN) has no lines: said, not failed.
    for concern in sorted(set(floors) - set(by)):
        print(f"coverage: {concern}: not measured here (not built in this configuration)")
    for p in problems:
        print(f"coverage: {p}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
