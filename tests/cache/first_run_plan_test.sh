#!/usr/bin/env bash
# tests/cache/first_run_plan_test.sh DNNTUNE SOURCE_DIR FIRST_RUN — the first run planned around the
# decision (pipeline/first_run_plan.hpp), checked on the suite's real first run (the tiny network, an
# empty cache, the default budget: FIRST_RUN, made by tests/cache/concurrent_first_run_test.sh):
#   1. the plan is announced at the start: its stages and the total ("first run: about N minutes: ...");
#   2. the records hold an anchor under glibc-tuned (the allocator is chosen from a measurement)
#      and a separating anchor (a setting other than the base one, glibc's default allocator), or
#      the run says it dropped them (a busy machine leaves less of the budget: checked at any speed);
#   3. those trained ran before the micro-runs that only refine the layers' sum;
#   4. the answer names the allocator's basis as measured where glibc-tuned was anchored;
#   5. when the first fit recommends an allocator variant, the first separating anchor's layout is
#      trained under it too, right after (the allocator's gain per thread count, model/allocation.hpp).
set -euo pipefail
dnntune=$1
source_dir=$2
first_run=$3
fail() { echo "FAILED: $*" >&2; tail -40 "$first_run/first.log" >&2; exit 1; }
[[ -s $first_run/first.log && -s $first_run/first.json ]] || fail "no first run in $first_run"
grep -Eq "first run: about [0-9.]+ minutes: .*layer passes \([0-9]+ s\)" \
    "$first_run/first.log" || fail "the plan was not announced with its stages and total"
echo "ok: $(grep -o 'first run: about.*' "$first_run/first.log")"

# What ran, at any speed: the plan keeps or drops a stage by the time the earlier ones took (on a busy
# machine they take longer), and says so. A stage is either trained (recorded, in the plan's order:
# glibc-tuned and a separating anchor before the extra micro-runs) or its dropping is said; the
# decisions themselves, on recorded costs and a clock of their own: tests/pipeline_first_run_plan_test.cpp.
records=$(ls "$first_run"/cache/*/measurements/network.jsonl)
python3 - "$records" "$first_run/first.log" "$first_run/first.json" <<'PY' || fail "a stage neither recorded in order nor said dropped"
import json, re, sys
runs = [json.loads(line) for line in open(sys.argv[1])]
runs = [r for r in runs if r["kind"] == "network" and r["pass"] == "iteration" and r["status"] == "ok"]
lines = open(sys.argv[2]).read().splitlines()
log = "\n".join(lines)
base = [r for r in runs if r.get("allocator", "default") == "default" and r["processes"] == 1 and r["threads"] > 1]
if not base:  # every later stage rests on it: without it the run fits and answers, and says why
    assert re.search(r"anchor at 1x\d+ not trained: about \d+ s, past the \d+ s left of the first run", log), "no base anchor"
    print("the base anchor was said dropped: nothing later to check")
    sys.exit(0)
tuned = [r for r in runs if r.get("allocator") == "glibc-tuned"]
separating = [r for r in runs if r.get("allocator", "default") == "default" and (r["processes"], r["threads"]) !=
              (base[0]["processes"], base[0]["threads"])]
print("base:", len(base), "glibc-tuned:", len(tuned), "separating:", [(r["processes"], r["threads"]) for r in separating])
tuned_dropped = re.search(r"not within the budget:.*the glibc-tuned anchor|allocator anchors not trained|"
                          r"allocator anchors of .* under .*glibc-tuned.* skipped", log)
separating_dropped = re.search(r"not within the budget:.*separating anchor|anchor of tiny_residual mb4 at \S+ skipped", log)
assert tuned or tuned_dropped, "glibc-tuned neither anchored nor said dropped"
assert separating or separating_dropped, "no separating anchor, and none said dropped"
def first(pattern):
    return next((i for i, line in enumerate(lines) if re.search(pattern, line)), None)
measuring = [i for i, line in enumerate(lines) if re.search(r"measuring \d+ layer passes", line)]
tuned_at = first("under the glibc-tuned allocator")
separating_at = first("to separate it from|to check the top candidate|to look for a one-thread")
print("priority-1 micro-runs at line", measuring[0], "glibc-tuned at", tuned_at, "separating at", separating_at,
      "extra micro-runs at", measuring[1:] or "none")
ran = [at for at in (tuned_at, separating_at) if at is not None]
assert all(measuring[0] < at for at in ran) and ran == sorted(ran), "out of the plan's order"
assert all(later > at for later in measuring[1:] for at in ran), "an anchor after the extra micro-runs"
allocator = json.load(open(sys.argv[3]))["allocator"]
print("allocator:", allocator["chosen"], [(v["name"], v["basis"]) for v in allocator["variants"]])
# The allocator's basis: measured where glibc-tuned was anchored.
assert not tuned or any(v["name"] == "glibc-tuned" and v["basis"] == "measured" for v in allocator["variants"]), allocator
PY
echo "ok: glibc-tuned and a separating anchor measured before the extra micro-runs (or said dropped), the allocator's basis said"

# 5. Whether the tiny network gains from an allocator variant depends on the machine: checked
# whenever the first fit recommended one (the log says it trained the layout under it).
if grep -q "to compare the layouts under the allocator the answer sets" "$first_run/first.log"; then
    python3 - "$first_run/first.log" "$records" <<'PY' || fail "the rival layout was not trained under the allocator right after"
import json, re, sys
# A run of several processes says its mpirun line right after its own line: part of the same run.
lines = [line for line in open(sys.argv[1]).read().splitlines() if "dnntune: launching: " not in line]
paired = [i for i, line in enumerate(lines) if "to compare the layouts under the allocator" in line]
separating = next(i for i, line in enumerate(lines) if re.search("to separate it from|to check the top candidate", line))
assert separating < paired[0] and all(b == a + 1 for a, b in zip(paired, paired[1:])), (separating, paired)
setting = re.search(r"for real \((\d+)x(\d+)\) under ([a-z-]+)", lines[paired[0]])
processes, threads, allocator = int(setting[1]), int(setting[2]), setting[3]
assert allocator == "glibc-tuned", allocator  # the reference every variant is fitted against comes first
runs = [json.loads(line) for line in open(sys.argv[2])]
assert any(r["kind"] == "network" and r["pass"] == "iteration" and r["status"] == "ok" and
           r.get("allocator") == allocator and (r["processes"], r["threads"]) == (processes, threads) for r in runs)
print("paired:", [lines[i].split("for real ")[1] for i in paired])
PY
    echo "ok: the rival layout was trained under the recommended allocator right after its default anchor"
else
    echo "ok: the first fit recommended glibc's defaults here, so no layout was trained under a variant"
fi
