#!/usr/bin/env python3
"""Regenerates docs/results/pliant.md: every preset on every scenario, seeds 1-3, and whether
the `pliant` preset meets the bar set for it (computed from the runs, not asserted).

Run from the repository root after `cargo build --release`:
    python3 docs/results/pliant.py > docs/results/pliant.md
"""
import csv
import json
import subprocess
import sys
import tempfile
from collections import Counter

PLIANT = "target/release/pliant"
SEEDS = [1, 2, 3]
# (scenario, scale): google-day at 0.1 as scripts/same-decisions.sh runs it.
SCENARIOS = [("mixed", 1), ("high-load", 1), ("low-load", 1), ("multi-load", 1), ("google-like", 1),
             ("google-day", 0.1), ("two-job", 1), ("reservation", 1)]
BIGC = ["high-load", "low-load", "multi-load", "google-like"]
PREEMPTIVE = ["kill", "ip", "gp", "suspend", "priority-kill", "checkpoint-hdd", "checkpoint-ssd", "checkpoint-nvm",
              "adaptive-hdd", "adaptive-ssd", "adaptive-nvm"]
WASTE_BOUND = ["kill", "ip", "gp", "priority-kill"]
TOLERANCE = 1.05
FIFO_BOUND = 1.25
# The short queue's guaranteed share, BIG-C §5.1's 95 % (the default) and below: how much of the
# cluster the short jobs may take back bounds what the long jobs lose (see `share_sweep`).
SHORT_SHARES = [0.95, 0.8, 0.6, 0.4, 0.2]
# BIG-C's delayed resumption D (§4.3, Fig. 7a: 3 by default): how many offers of its node a preempted
# container refuses before it resumes; the paper's own knob between short latency and long slowdown.
DELAYS = [0, 1, 2, 3, 5]


def presets():
    text = subprocess.run([PLIANT, "policies"], check=True, capture_output=True, text=True).stdout
    names, on = [], False
    for line in text.splitlines():
        if line.startswith("presets:"):
            on = True
        elif on and not line.strip():
            break
        elif on:
            names.append(line.split()[0])
    return names


# What the seed-by-seed rows under each failed point show, written once the runs were read (the
# figures themselves are all computed above).
NOTES = """### Why pliant lost, and what was changed

Found from runs (reproduce with `pliant simulate --scenario google-like --seed 1 --policies pliant,suspend
--out DIR`, then DIR's `jobs.csv` and `preemptions.csv`; the job-by-job tables under each failed point
below are made the same way):

1. **Equal costs went to the lowest-numbered node.** Every freeze and every CPU-only shrink cost 0
   core-s in the first cost model, so the planner's choice between nodes fell to its last key, the node
   index: the victims were whichever long tasks ran on the first nodes, whatever their jobs' remaining
   time. On `google-like` seed 1 pliant's 182 long jobs queued 900 s on average (`suspend`: 188 s) and
   ran 1,080 s (873 s); one executor was shrunk 97 times. A run restricted to freezes (a shrink skipped
   for every CPU-only need) with whole resumption still had a long p90 of 3,991 s against `suspend`'s
   1,594 s: the planner's choice of victims, not the mechanism, was the loss. Equal costs now go to
   the node holding the victim BIG-C's Algorithm 2 takes first over the whole queue (longest remaining
   job first); `google-like`'s long p90 fell from 3,705 s to 1,823 s (means over seeds 1–3),
   `google-day`'s from 15,299 s to 11,557 s, the others' by up to 9 %.
2. **A freeze or shrink was free.** The first model priced neither the cores a victim gives up while the
   waiting task runs nor, in a coupled (Spark) phase, its siblings idling at the stage barrier
   (`docs/results/bigc.md` measured both). Both are now in `stopped` (docs/cost-model.md); a kill pays
   its own cores too but not its siblings' (its in-flight work goes back to its job). With it pliant
   kills young executors whose siblings would idle longer than the kill loses (the `kill` counts
   below): long p90 fell a further 0.3–4 % on every scenario but `two-job` and `reservation`
   (unchanged), at a waste under half of `gp`'s.
3. **A shrink below the working set was priced as one above it, and checkpointing was not offered.**
   On `two-job` pliant shrank the long job by the short job's need, ⟨4 CPU, 2 GB⟩; 1 GB of that was
   below its working set, so it swapped, froze whole, waited 3 delayed-resumption offers (9 s) after
   the short job ended and read 1 GB back at 5.1 s/GB: 77 task-s stalled and a long p90 of 137.1 s,
   against 5.8 and 125.8 s for `checkpoint-nvm`, which dumps and restores at NVM's 1.7 GB/s and is
   placed again as soon as there is room. The cost model now estimates a victim's working set (80 % of
   its request, the simulator's own assumption): memory above it frees at once and costs nothing,
   memory below it is swapped and freezes the whole victim (its cores stopped from the preemption on);
   and it offers a checkpoint to NVM where the node has a tier (the simulator's nodes do, live ones do
   not), priced with the checkpoint paper's Alg. 1 estimate (dump after the node's queue, restore) in
   the same core-seconds. On `two-job` the dump costs 275.0 core-s against 284.4 for the shrink: pliant
   checkpoints, and its long p90 is `checkpoint-nvm`'s, 125.8 s. Elsewhere it never checkpoints (a
   Spark executor of 16–32 GB takes 9–19 s to dump, its cores and the waiting task's idle meanwhile,
   where a CPU shrink frees cores at once); its long p90
   moved by −1.2 % (`high-load`) to +2.0 % (`low-load`) and no point changed but `two-job`'s. (Runs
   that differ only in the working-set estimate, w = 1: all memory taken counts as swapped, moved the
   same p90s by −1.0 % to +2.0 % against the old model: moves of this size come with any change of
   decisions on these scenarios.)
4. **Tried and not kept: the delayed resumption priced.** A frozen or shrunk victim resumes only after
   D = 3 refused offers of its node, one per monitor run (9 s), a killed or checkpointed one as soon as
   there is room. Adding D × 3 s to a freeze's and a shrink's stopped time moved pliant's long p90 by
   −4.3 % (`low-load`, 727 → 696 s) to +0.8 % (`high-load`), doubled its waste (more kills) and made
   no further point hold (`low-load` still 696 s against the bound of 676 s); it is not in the model
   (docs/cost-model.md says what it would change live).

5. **Where the long p90 goes, measured** (before the change of item 6; `pliant simulate --scenario S
   --seed N --policies fifo,pliant --out DIR`, DIR's `jobs.csv` and `preemptions.csv`; the long jobs at
   or above the p90, 4–5 of 37–49 per seed, 19 of 182 on `google-like`):
   - *Two kinds of tail job.* Jobs that run while the short bursts come, shrunk again and again, and
     jobs that queue behind them. On `low-load` seed 1 the four jobs submitted at t = 0 took 303 of the
     599 preemptions (44–133 each) and are four of the five tail jobs: each ran 2.3–3.1 × as long as
     under fifo, in a queue of 0 s. On `high-load` seed 1 one such job (40 shrinks, 1,110 s against
     369) heads the tail; the next five were preempted 0–2 times and queued 560–595 s (fifo: 128–497 s).
     Means over the tail jobs, pliant against fifo, queue s / run s: `high-load` 304–462 / 542–674
     against 82–220 / 314–379 (seeds 1–3), `low-load` 77–180 / 434–804 against 45–87 / 323–361,
     `multi-load` 104–615 / 407–854 against 92–449 / 364–389, `google-like` 274–1,572 / 1,176–1,233
     against 200–1,087 / 847–870.
   - *Preemptions go to few jobs.* Algorithm 2's order (longest remaining job first) sends them to the
     oldest big jobs: on `high-load` seed 1, 24 of the 46 long jobs were never preempted and one took
     71; the more a job was preempted, the longer it ran against fifo (correlation 0.88 over the 46
     jobs, 0.81 on `low-load` seed 1).
   - *Siblings idle at barriers.* A counter added to the simulator's pool for this measurement (now
     `simulate --barrier-idle`, item 7) summed the cores a running executor held with no
     stage task while its stage's pool was empty, waiting for the stage's slowest executor. Long jobs,
     core-hours, means over seeds 1–3, pliant against fifo: `high-load` 13.8 / 1.5, `low-load` 11.8 /
     1.7, `multi-load` 17.6 / 2.8, `google-like` 94.3 / 17.6: more than pliant's waste (1.2–13.9
     core-h) and its stalled task time (0.1–1.5 task-h).
6. **A phase held back already is held back only by the excess.** A stage ends with its slowest
   executor, so stopping a second executor of a phase by no more than its slowest member is stopped
   idles no sibling further; the model priced every stop as if the phase had none (docs/cost-model.md,
   `stopped`). The siblings' term now counts only the part of a stop beyond the phase's slowest member
   (shrunk by its part of its request, frozen or restoring whole), and an executor shrunk already is
   priced by its part of its request, not of what it holds. Preemption now goes first to the phases
   already held back. Long p90: `low-load` and `google-like` −1.5 %, `multi-load` −3.2 % (now within
   1.25 × fifo's, by under 0.1 %), `high-load` +1.3 %; `mixed` −0.6 %; waste −9 % (`high-load`) to −46 %
   (`mixed`). The counter of item 5 did not fall (`high-load` 14.8, `low-load` 12.5, `multi-load` 17.8,
   `google-like` 94.7 core-h): it comes from executors stopped alone while their siblings run, not
   from second stops in phases held back already. `two-job`, `reservation` and
   `google-day` are unchanged (no coupled phase held back). Tried and not kept: the victim's own cores
   counted beyond the slowest too (long p90 +1.2 % to +3.0 % against item 6 alone on the four BIG-C
   scenarios); Algorithm 2's order replaced (with item 6) by the job with the least expected JCT
   (elapsed + remaining) or by the youngest job first (long p90 −1.4 % to +3.5 %, no further point held, and
   `google-like`'s short p95 went over its bound).
7. **Barrier idle measured; two more changes tried and not kept.** The counter of item 5 is now the
   simulator's `--barrier-idle` (a measurement: no decision changes, and the JSON has the key only when
   asked for); the tables below show it for every preset, and for `pliant` along both sweeps. Tried with
   temporary code, means over seeds 1–3 against the model as it is:
   - *A Spark executor's kill priced by its in-flight work only.* The pool gives a killed executor's
     in-flight tasks back and keeps what its finished tasks did, but the core knows no stage task's length:
     the trial capped ran_v at the repository's own 40 s stage task (`long_jobs.rs`), then at 20 s. At
     40 s long p90 moved −0.2 % (`high-load`) to +2.3 % (`google-like`) and `google-like`'s waste rose
     from 10.3 to 22.8 core-h; at 20 s `high-load`'s short p95 (33.7 s) and `google-like`'s waste (38.5
     core-h) went over their bounds.
   - *A shrink capped at one r_GP step (2 cores) per victim*, so that a need is collected from many
     executors (BIG-C §4.3; Fig. 7b: a finer step, a lower CoV of JCT). Short p95 went over its bound on
     `high-load` (52.2 s), `multi-load` (35.8 s) and `google-like` (76.0 s), and long p90 rose 2.1 %
     (`low-load`) to 12.7 % (`google-like`).

What still fails, and why (the tables under each scenario):

- *long p90 ≤ 1.25 × fifo's* on `high-load`, `low-load` and `google-like` (`multi-load` holds by under
  0.1 %): no preemptive preset meets it there (the best preemptive long p90 is above the bound on each:
  see the tables); pliant's is the least of all preemptive presets or within 0.3 % of it. What bounds
  it is how much the short jobs take and how soon the victims come back, not which victims pliant
  takes: under each failed point, two sweeps of `pliant` trace the trade-off. Lowering the short
  queue's guaranteed share (BIG-C §5.1's 95 %) brings the long p90 under 1.25 × fifo's only where the
  short p95 is far outside its own bound; BIG-C's delayed resumption D (§4.3, Fig. 7a) lowers the long
  p90 as it falls, but not to the bound: at D = 0 `low-load`'s is 683.1 s against 676.1, `google-like`'s
  1,741.5 against 1,740.1 with its short p95 then 0.8 % over its own bound, `high-load`'s 955.2 against
  897.2 with its short p95 0.6 % over. A line under the sweeps
  says which preset or setting meets both bounds: none does. Barrier idle does not follow the long p90
  along either sweep (at D = 0 it is above D = 3's, the long p90 below), so the idling that the
  simulator's pool makes (a shrunk executor slows all its in-flight tasks) is not by itself what holds
  the long p90 over the bound. fifo stops no long job and pays in short-job latency (its short p95 is
  9–15 × pliant's).
- Points held by a margin under a few percent (`high-load`'s and `google-like`'s short p95,
  `multi-load`'s long p90 against fifo, `reservation`'s waste, which equals `kill`'s: pliant kills every
  victim there, as `kill` does) can tip either way on other seeds."""

REFUSED = {}


def run(scenario, scale, seed, policies):
    """Every policy's result; a policy the simulator refuses on the scenario (it says which, exit 2)
    is dropped and its refusal kept in REFUSED."""
    policies = [p for p in policies if p not in REFUSED.get(scenario, {})]
    while True:
        cmd = [PLIANT, "simulate", "--scenario", scenario, "--seed", str(seed), "--scale", str(scale),
               "--policies", ",".join(policies), "--format", "json", "--barrier-idle"]
        print(f"running {' '.join(cmd)}", file=sys.stderr)
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode == 0:
            return {r["policy"]: r for r in json.loads(done.stdout)["results"]}
        refused = [p for p in policies if f"policy {p}:" in done.stderr]
        if done.returncode != 2 or not refused:
            sys.exit(f"{' '.join(cmd)} failed: {done.stderr}")
        for p in refused:
            REFUSED.setdefault(scenario, {})[p] = done.stderr.strip().splitlines()[0]
            policies.remove(p)


def short_p95(r):
    return r["classes"]["short"]["jct"]["p95"]


def long_p90(r):
    return r["classes"]["long"]["jct_retry"]["p90"]


def waste(r):
    return r["waste_core_hours"]


def barrier_idle(r):
    return r["barrier_idle_core_hours"]


def preempted(r):
    return sum(r["preemptions"].values())


def mean(values):
    values = [v for v in values if v is not None]
    return sum(values) / len(values) if values else None


def cell(runs, policy, metric, digits=1):
    values = [metric(r[policy]) for r in runs]
    return f"{mean(values):.{digits}f} ({' / '.join(f'{v:.{digits}f}' for v in values)})"


def best(runs, policies, metric):
    means = {p: mean([metric(r[p]) for r in runs]) for p in policies}
    name = min(means, key=lambda p: means[p])
    return name, means[name]


def check(scenario, runs):
    """The bar's points for one scenario: (name, pliant's value, bound, holds, who sets the bound)."""
    m = lambda metric: mean([metric(r["pliant"]) for r in runs])
    points = []
    who, b = best(runs, PREEMPTIVE, short_p95)
    points.append(("short p95 ≤ 1.05 × best preemptive", m(short_p95), TOLERANCE * b, who))
    who, b = best(runs, PREEMPTIVE, long_p90)
    points.append(("long jct_retry p90 ≤ 1.05 × best preemptive", m(long_p90), TOLERANCE * b, who))
    who, b = best(runs, WASTE_BOUND, waste)
    points.append(("waste ≤ least of kill/ip/gp/priority-kill", m(waste), b, who))
    if scenario in BIGC:
        fifo = mean([long_p90(r["fifo"]) for r in runs])
        points.append(("long jct_retry p90 ≤ 1.25 × fifo's", m(long_p90), FIFO_BOUND * fifo, "fifo"))
    return [(name, v, bound, v <= bound + 1e-9, who) for name, v, bound, who in points]


def per_job(scenario, scale, seed, who, cls):
    """Job by job on one seed (`--out`'s jobs.csv and preemptions.csv): `cls`'s jobs under pliant and
    under `who`, their mean queueing delay and run time, and the five pliant delays most against `who`
    with what pliant took from each (its choices by mechanism)."""
    with tempfile.TemporaryDirectory() as out:
        cmd = [PLIANT, "simulate", "-q", "--scenario", scenario, "--seed", str(seed), "--scale", str(scale),
               "--policies", f"pliant,{who}", "--format", "json", "--out", out]
        print(f"running {' '.join(cmd)}", file=sys.stderr)
        subprocess.run(cmd, check=True, capture_output=True)
        jobs, index = {}, {}
        for r in csv.DictReader(open(f"{out}/jobs.csv")):
            if r["policy"] == "pliant":
                # preemptions.csv names a job by the core's id: its place in submission order, as
                # jobs.csv lists them (a resubmission's new id is not counted here).
                index[r["job"]] = str(len(index))
            if r["class"] == cls:
                jobs.setdefault(r["policy"], {})[r["job"]] = r
        taken = Counter()
        for r in csv.DictReader(open(f"{out}/preemptions.csv")):
            if r["policy"] == "pliant":
                taken[(r["core_job"], r["chosen"])] += 1
    jct = lambda r: float(r["jct_retry_s"])
    queue = lambda r: float(r["queue_delay_s"])
    print(f"\nSeed {seed}, {cls} jobs one by one (`--out`'s jobs.csv, preemptions.csv):\n")
    print("| policy | mean queue s | mean run s (JCT − queue) | mean stalled task-s |")
    print("|---|---|---|---|")
    for p in ["pliant", who]:
        rows = list(jobs[p].values())
        n = len(rows)
        print(f"| {p} | {sum(map(queue, rows)) / n:.1f} | {sum(jct(r) - queue(r) for r in rows) / n:.1f} | "
              f"{sum(float(r['stalled_task_s']) for r in rows) / n:.1f} |")
    print()
    print(f"| job | tasks | pliant JCT s (queue) | {who} JCT s (queue) | pliant took from it |")
    print("|---|---|---|---|---|")
    gaps = sorted(jobs["pliant"], key=lambda j: jct(jobs[who][j]) - jct(jobs["pliant"][j]))[:5]
    for j in gaps:
        a, b = jobs["pliant"][j], jobs[who][j]
        took = ", ".join(f"{m} {n}" for (job, m), n in sorted(taken.items()) if job == index[j]) or "nothing"
        print(f"| {j} | {a['tasks']} | {jct(a):.0f} ({queue(a):.0f}) | {jct(b):.0f} ({queue(b):.0f}) | {took} |")


def sweep(scenario, scale, runs, key, values, about):
    """What bounds pliant's long p90 against fifo's: pliant's runs with one setting varied, the short
    p95 and long p90 against their bounds, and the core-hours executors idled at stage barriers.
    Returns the settings that met both bounds."""
    short_bound = TOLERANCE * best(runs, PREEMPTIVE, short_p95)[1]
    long_bound = FIFO_BOUND * mean([long_p90(r["fifo"]) for r in runs])
    print(f"\n{about} Bounds: short p95 ≤ {short_bound:.2f} s, long p90 ≤ {long_bound:.2f} s; `fifo`'s"
          f" executors idle at barriers {mean([barrier_idle(r['fifo']) for r in runs]):.1f} core-h.\n")
    print(f"| {key} | short p95 s | within | long p90 s | within 1.25 × fifo | barrier idle c·h | waste c·h |")
    print("|---|---|---|---|---|---|---|")
    both = []
    for value in values:
        rs = []
        for seed in SEEDS:
            cmd = [PLIANT, "simulate", "--scenario", scenario, "--seed", str(seed), "--scale", str(scale),
                   "--policies", "pliant", "--set", f"{key}={value}", "--format", "json", "--barrier-idle"]
            print(f"running {' '.join(cmd)}", file=sys.stderr)
            done = subprocess.run(cmd, check=True, capture_output=True, text=True)
            rs.append(json.loads(done.stdout)["results"][0])
        sp, lp = mean([short_p95(r) for r in rs]), mean([long_p90(r) for r in rs])
        idle, w = mean([barrier_idle(r) for r in rs]), mean([waste(r) for r in rs])
        yes = lambda v, b: "yes" if v <= b + 1e-9 else "**no**"
        print(f"| {value} | {sp:.1f} | {yes(sp, short_bound)} | {lp:.1f} | {yes(lp, long_bound)} | {idle:.1f} | {w:.2f} |")
        if sp <= short_bound + 1e-9 and lp <= long_bound + 1e-9:
            both.append(f"{key}={value}")
    return both


def frontier(scenario, scale, runs):
    """The trade-off behind the 1.25 × fifo point: every preemptive preset, and pliant under two knobs,
    against the short p95 bound and the long p90 bound together."""
    short_bound = TOLERANCE * best(runs, PREEMPTIVE, short_p95)[1]
    long_bound = FIFO_BOUND * mean([long_p90(r["fifo"]) for r in runs])
    inside = [p for p in PREEMPTIVE + ["pliant"]
              if mean([short_p95(r[p]) for r in runs]) <= short_bound + 1e-9
              and mean([long_p90(r[p]) for r in runs]) <= long_bound + 1e-9]
    share = sweep(scenario, scale, runs, "short_share", SHORT_SHARES,
                  "What bounds it (1): `pliant` with the short queue's guaranteed share lowered (`--set short_share=X`,"
                  " seeds 1–3; BIG-C §5.1: 0.95), so that the short jobs may take less back.")
    delay = sweep(scenario, scale, runs, "delayed_resumption", DELAYS,
                  "What bounds it (2): `pliant` with BIG-C's delayed resumption varied (`--set delayed_resumption=D`,"
                  " seeds 1–3; §4.3 and Fig. 7a: D = 3), so that victims come back sooner or later.")
    met = inside + share + delay
    print(f"\nMeeting both bounds (short p95 and long p90 ≤ 1.25 × fifo's) on {scenario}: "
          + (", ".join(f"`{m}`" for m in met) if met else "no preemptive preset and no setting above") + ".")


def why(scenario, scale, runs, failed):
    """The runs behind each failed point: pliant against the preset that sets the bound, seed by seed,
    then job by job on the seed where pliant trails most."""
    for name, v, bound, _, who in failed:
        print(f"\n*{name}* fails ({v:.3f} > {bound:.3f}, set by `{who}`). Seed by seed:\n")
        print("| seed | policy | short p95 s | short mean queue s | long retry p90 s | long failed | waste c·h "
              "(lost to kills) | preemptions by mechanism |")
        print("|---|---|---|---|---|---|---|---|")
        for seed, r in zip(SEEDS, runs):
            for p in ["pliant", who]:
                x = r[p]
                c = x["classes"]
                lost = x["lost_work_core_seconds"] / 3600
                mech = ", ".join(f"{k} {n}" for k, n in sorted(x["preemptions"].items())) or "none"
                print(f"| {seed} | {p} | {short_p95(x):.1f} | {c['short']['queue_delay']['mean']:.2f} | "
                      f"{long_p90(x):.1f} | {c['long']['failed']} of {c['long']['jobs']} | {waste(x):.3f} ({lost:.3f}) "
                      f"| {mech} |")
        metric, cls = (short_p95, "short") if name.startswith("short") else (long_p90, "long")
        if name.startswith("waste"):
            continue
        if who == "fifo":
            frontier(scenario, scale, runs)
        worst = max(zip(SEEDS, runs), key=lambda sr: metric(sr[1]["pliant"]) - metric(sr[1][who]))[0]
        per_job(scenario, scale, worst, who, cls)


def main():
    policies = presets()
    results = {}
    for scenario, scale in SCENARIOS:
        results[scenario] = [run(scenario, scale, seed, policies) for seed in SEEDS]
    checks = {s: check(s, results[s]) for s, _ in SCENARIOS}

    print("# `pliant` against every preset")
    print()
    print("Generated by `python3 docs/results/pliant.py > docs/results/pliant.md` (after `cargo build --release`)")
    print("from `pliant simulate --scenario S --seed N --policies <every preset> --format json --barrier-idle`, seeds 1–3")
    print("(`google-day` at `--scale 0.1`). The `pliant` preset and its cost model are described in")
    print("[../cost-model.md](../cost-model.md). Every figure is the mean over the three seeds, then the seeds'")
    print("own values in brackets. *short p95*: the short class's JCT p95 (s); *long p90*: the long class's")
    print("owner-view JCT p90 (`jct_retry`, a failed job resubmitted by its owner, s); *waste*: core-hours lost")
    print("to kills or held while reclaiming, dumping or restoring; *barrier idle*: core-hours running Spark")
    print("executors held with no stage task in flight, waiting at their stage's barrier for its slowest executor")
    print("(`--barrier-idle`; not part of the waste).")
    print()
    print("## The bar set for `pliant`, scenario by scenario")
    print()
    print("Preemptive presets: " + ", ".join(f"`{p}`" for p in PREEMPTIVE) + ". A point holds when pliant's")
    print("mean is within the bound; the four BIG-C scenarios (" + ", ".join(f"`{s}`" for s in BIGC) + ") also")
    print("bound its long p90 by 1.25 × `fifo`'s.")
    print()
    print("| scenario | short p95 | long p90 | waste | long p90 vs fifo | all |")
    print("|---|---|---|---|---|---|")
    for scenario, _ in SCENARIOS:
        pts = checks[scenario]
        cells = [f"{'holds' if ok else '**fails**'}: {v:.2f} vs {bound:.2f} (`{who}`)" for _, v, bound, ok, who in pts]
        if len(cells) == 3:
            cells.append("—")
        verdict = "holds" if all(ok for *_, ok, _ in pts) else "**fails**"
        print(f"| {scenario} | " + " | ".join(cells) + f" | {verdict} |")
    print()
    print("(bounds: 1.05 × the best preemptive preset's short p95 and long p90, the least waste of")
    print("`kill`/`ip`/`gp`/`priority-kill`, 1.25 × `fifo`'s long p90; the preset that sets each in brackets.)")
    print()
    print(NOTES)

    for scenario, scale in SCENARIOS:
        runs = results[scenario]
        print(f"\n## {scenario}" + ("" if scale == 1 else f" (scale {scale})"))
        print()
        print("| policy | short p95 s | long p90 s | waste c·h | preemptions | barrier idle c·h |")
        print("|---|---|---|---|---|---|")
        for p in [p for p in policies if p in runs[0]]:
            print(f"| {p} | {cell(runs, p, short_p95)} | {cell(runs, p, long_p90)} | {cell(runs, p, waste, 3)} | "
                  f"{cell(runs, p, preempted, 0)} | {cell(runs, p, barrier_idle, 1)} |")
        for p, why_not in REFUSED.get(scenario, {}).items():
            print(f"| {p} | refused: {why_not} | | | | |")
        print()
        counts = []
        for seed, r in zip(SEEDS, runs):
            mech = r["pliant"]["preemptions"]
            total = sum(mech.values())
            shown = ", ".join(f"{k} {n} ({100 * n / total:.0f} %)" for k, n in sorted(mech.items())) or "none"
            counts.append(f"seed {seed}: {shown}")
        print("`pliant` chose (preemptions by mechanism; `graceful` is a shrink by the need, `suspend` a freeze")
        print("in place, `checkpoint` a dump to NVM): " + "; ".join(counts) + ".")
        failed = [pt for pt in checks[scenario] if not pt[3]]
        if failed:
            why(scenario, scale, runs, failed)


if __name__ == "__main__":
    main()
