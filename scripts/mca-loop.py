#!/usr/bin/env python3
"""Static throughput estimate of a kernel's inner loop: disassembles FUNCTION (a substring of
its demangled name) from OBJECT, takes the shortest backward-branch loop that holds at least
MIN_HITS instructions matching PATTERN (the multiply-adds of one tile: 16 for 8 x 2), and runs
llvm-mca on it for CPU.
Usage: scripts/mca-loop.py OBJECT FUNCTION PATTERN [CPU] [LLVM_MCA] [MIN_HITS]
A dev tool for docs/PERFORMANCE.md (llvm-mca comes with Debian's llvm packages)."""
import re, subprocess, sys

obj, func, pattern = sys.argv[1], sys.argv[2], sys.argv[3]
cpu = sys.argv[4] if len(sys.argv) > 4 else "sapphirerapids"
mca = sys.argv[5] if len(sys.argv) > 5 else "llvm-mca"
min_hits = int(sys.argv[6]) if len(sys.argv) > 6 else 16
dis = subprocess.run(["objdump", "-d", "-C", "--no-show-raw-insn", "-w", obj],
                     capture_output=True, text=True, check=True).stdout
blocks = re.split(r"\n(?=[0-9a-f]+ <)", dis)
body = next((b for b in blocks if func in b.split("\n", 1)[0]), None)
if body is None:
    sys.exit(f"{func}: not found in {obj}")
insns = []
for line in body.splitlines()[1:]:
    m = re.match(r"\s*([0-9a-f]+):\s+(.*)", line)
    if m:
        insns.append((int(m.group(1), 16), m.group(2).split("#")[0].strip()))
best = None
for i, (addr, text) in enumerate(insns):
    m = re.match(r"j\w+\s+([0-9a-f]+)", text)
    if not m or int(m.group(1), 16) > addr:
        continue
    start = int(m.group(1), 16)
    loop = [t for a, t in insns if start <= a <= addr]
    hits = sum(bool(re.search(pattern, t)) for t in loop)
    if hits >= min_hits and (best is None or len(loop) < len(best[1])):
        best = (hits, loop)
if best is None:
    sys.exit(f"{func}: no loop with '{pattern}'")
# llvm-mca wants plain AT&T assembly: drop the branch target, keep the shape of the loop.
asm = "\n".join(re.sub(r"^(j\w+)\s+.*", r"\1 0b", t).replace("<", "#<") for t in best[1])
asm = "0:\n" + asm + "\n"
out = subprocess.run([mca, f"-mcpu={cpu}", "-iterations=200"], input=asm, capture_output=True, text=True)
print(f"# {func}: {len(best[1])} instructions, {best[0]} matching '{pattern}'")
print(out.stdout[:1200] if out.returncode == 0 else out.stderr)
