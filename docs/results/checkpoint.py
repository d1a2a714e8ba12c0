#!/usr/bin/env python3
"""Regenerates docs/results/checkpoint.md: checkpoint-based preemption on
google-day (seeds 1-3) and the two-job bandwidth sweep, with the paper's
claims checked on the figures.

Run from the repository root after `cargo build --release`:
    python3 docs/results/checkpoint.py > docs/results/checkpoint.md
Plots of the sweep go to docs/results/checkpoint/two-job-nvm/.
"""
import json
import os
import subprocess
import sys

# The binary; PLIANT=... overrides (e.g. with a CARGO_TARGET_DIR elsewhere).
PLIANT = os.environ.get("PLIANT", "target/release/pliant")
SEEDS = [1, 2, 3]
LEVELS = ["free", "middle", "production"]
TIERS = ["hdd", "ssd", "nvm"]
GOOGLE = ["priority", "priority-kill"] + [f"checkpoint-{t}" for t in TIERS] + [f"adaptive-{t}" for t in TIERS]
SWEEP = ["priority", "priority-kill", "checkpoint-nvm", "adaptive-nvm"]
BANDWIDTHS = "10,20,50,100,200,300,500,1000,2000"
SWEEP_METRICS = "classes.production.jct.mean,classes.free.jct.mean,energy_kwh"
SWEEP_OUT = "docs/results/checkpoint/two-job-nvm"
# Table 3: seconds to dump 5 GB the first time, per tier.
DUMP_5GB_S = {"hdd": 169.18, "ssd": 43.73, "nvm": 2.92}
# Fig. 3 (§3.3.2): "reduces the resource wastage to 14.6%, 11.1% and 8.5%", against kill's "about 35%
# of the total capacity": read as % of capacity, over kill's 35 %; or read as % of kill's waste.
FIG3_PCT = {"hdd": 14.6, "ssd": 11.1, "nvm": 8.5}
FIG3_KILL_PCT = 35.0


def pliant(*args):
    return subprocess.run([PLIANT, *args], check=True, capture_output=True, text=True).stdout


def simulate(*args):
    print("running pliant simulate " + " ".join(args), file=sys.stderr)
    out = pliant("simulate", *args, "--policies", ",".join(GOOGLE), "--format", "json")
    return {r["policy"]: r for r in json.loads(out)["results"]}


def mean(xs):
    return sum(xs) / len(xs)


def check(ok, text):
    print(f"- **{'holds' if ok else 'does not hold'}**: {text}")


def google_runs(scale):
    return [simulate("--scenario", "google-day", "--seed", str(s), "--scale", str(scale)) for s in SEEDS]


def google_tables(scale, runs):
    report(f"google-day, scale {scale} (runs: seeds 1, 2, 3)", f"--scenario google-day --scale {scale} --seed S", runs)


def report(title, args, runs):
    print(f"\n## {title}\n")
    print(f"`pliant simulate {args} --policies {','.join(GOOGLE)}`\n")
    print("Waste = core time lost to kills + core time held while dumping, queueing for a dump or restoring, "
          "as % of capacity (cores × makespan) per run; JCT = mean job response time per level relative to "
          "`priority-kill` (the paper's kill), mean over the runs; energy from the linear power model "
          "(idle 100 W, peak 250 W per node).\n")
    print(f"| policy | waste % ({' / '.join(f'run {i + 1}' for i in range(len(runs)))}) | waste core-h (mean) | free JCT | middle JCT | production JCT "
          "| energy kWh (mean) | dumps full / incr. | restores local / remote | adaptive kills | preemptions |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for p in GOOGLE:
        rs = [r[p] for r in runs]
        waste = " / ".join(f"{r['waste_pct_capacity']:.2f}" for r in rs)
        rel = [mean([r["jct_vs_kill"][lv] for r in rs]) for lv in LEVELS]
        c = [mean([r["checkpoints"][k] for r in rs]) for k in
             ["full_dumps", "incremental_dumps", "local_restores", "remote_restores", "adaptive_kills"]]
        pre = mean([sum(r["preemptions"].values()) for r in rs])
        print(f"| {p} | {waste} | {mean([r['waste_core_hours'] for r in rs]):.0f} | {rel[0]:.3f} | {rel[1]:.3f} "
              f"| {rel[2]:.3f} | {mean([r['energy_kwh'] for r in rs]):.0f} | {c[0]:.0f} / {c[1]:.0f} "
              f"| {c[2]:.0f} / {c[3]:.0f} | {c[4]:.0f} | {pre:.0f} |")
    fig3(runs)
    print("\nMean JCT in seconds (mean over the runs):\n")
    print("| policy | free | middle | production |")
    print("|---|---|---|---|")
    for p in GOOGLE:
        print(f"| {p} | " + " | ".join(f"{mean([r[p]['classes'][lv]['jct']['mean'] for r in runs]):.0f}"
                                      for lv in LEVELS) + " |")
    print("\nPreemptions per 100 tasks by level, mean over the runs (Table 1 of the paper, Google 2011 under "
          "its own scheduler: 20.26 % of free, 0.55 % of middle and 1.02 % of production tasks preempted, "
          "many of them more than once; here a task preempted twice counts twice):\n")
    print("| policy | free | middle | production | all |")
    print("|---|---|---|---|---|")
    for p in GOOGLE[1:]:
        per = [mean([100 * r[p]["classes"][lv]["preemptions"] / max(1, r[p]["classes"][lv]["tasks"]) for r in runs])
               for lv in LEVELS]
        total = mean([100 * sum(r[p]["classes"][lv]["preemptions"] for lv in LEVELS)
                      / max(1, sum(r[p]["classes"][lv]["tasks"] for lv in LEVELS)) for r in runs])
        print(f"| {p} | " + " | ".join(f"{x:.2f}" for x in per) + f" | {total:.2f} |")
    print("\nFig. 5 (adaptive over basic checkpointing, mean JCT ratio, mean over runs; < 1 = adaptive faster):\n")
    print("| tier | free | middle | production |")
    print("|---|---|---|---|")
    for t in TIERS:
        ratios = [mean([r[f"adaptive-{t}"]["classes"][lv]["jct"]["mean"] / r[f"checkpoint-{t}"]["classes"][lv]["jct"]["mean"]
                        for r in runs]) for lv in LEVELS]
        print(f"| {t} | " + " | ".join(f"{x:.3f}" for x in ratios) + " |")
    print("\nChecks (each run separately):\n")
    order = ["priority-kill", "checkpoint-hdd", "checkpoint-ssd", "checkpoint-nvm"]
    check(all(all(r[a]["waste_pct_capacity"] > r[b]["waste_pct_capacity"] for a, b in zip(order, order[1:])) for r in runs),
          "waste orders kill > checkpoint-hdd > checkpoint-ssd > checkpoint-nvm")
    prod = [r["checkpoint-nvm"]["jct_vs_kill"]["production"] for r in runs]
    check(all(abs(x - 1) <= 0.10 for x in prod),
          "production (high-priority) JCT under checkpoint-nvm within 10 % of kill's: "
          + ", ".join(f"{x:.3f}" for x in prod))
    for t in ["hdd", "ssd"]:
        free = [r[f"adaptive-{t}"]["classes"]["free"]["jct"]["mean"] / r[f"checkpoint-{t}"]["classes"]["free"]["jct"]["mean"]
                for r in runs]
        check(all(x < 1 for x in free), f"adaptive-{t} lowers free (low-priority) JCT versus checkpoint-{t}: "
              + ", ".join(f"{x:.3f}" for x in free))


def fit(xs, ys):
    """Least-squares line y = a + b x: (a, b)."""
    mx, my = mean(xs), mean(ys)
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
    return my - b * mx, b


def fig3(runs):
    """Each tier's waste over kill's beside Fig. 3's, and the part of it the storage speed does not explain."""
    print("\nFig. 3 (waste of checkpoint-TIER over priority-kill's, per run), beside the paper's under both "
          f"readings of its text: % of capacity over kill's {FIG3_KILL_PCT:g} % (A), or % of kill's waste (B). "
          "`fixed` is the intercept of a straight line through the three tiers against the seconds a GB takes "
          "to dump (Table 3): the waste the storage speed does not explain.\n")
    ratio = [{t: r[f"checkpoint-{t}"]["waste_core_hours"] / r["priority-kill"]["waste_core_hours"] for t in TIERS}
             for r in runs]
    s_per_gb = [DUMP_5GB_S[t] / 5 for t in TIERS]
    paper_a = {t: FIG3_PCT[t] / FIG3_KILL_PCT for t in TIERS}
    paper_b = {t: FIG3_PCT[t] / 100 for t in TIERS}
    print("| tier | s per GB | ours (" + " / ".join(f"run {i + 1}" for i in range(len(runs)))
          + ") | paper A | within 0.1 of A? | paper B | within 0.1 of B? |")
    print("|---|---|---|---|---|---|---|")
    for t, spg in zip(TIERS, s_per_gb):
        ours = [x[t] for x in ratio]
        ok = lambda p: "yes" if all(abs(o - p) <= 0.1 for o in ours) else "**no**"
        print(f"| {t} | {spg:.2f} | " + " / ".join(f"{o:.3f}" for o in ours)
              + f" | {paper_a[t]:.3f} | {ok(paper_a[t])} | {paper_b[t]:.3f} | {ok(paper_b[t])} |")
    ours_fixed = [fit(s_per_gb, [x[t] for t in TIERS]) for x in ratio]
    (fa, sa), (fb, sb) = fit(s_per_gb, [paper_a[t] for t in TIERS]), fit(s_per_gb, [paper_b[t] for t in TIERS])
    print(f"| fixed | 0 | " + " / ".join(f"{a:.3f}" for a, _ in ours_fixed) + f" | {fa:.3f} | | {fb:.3f} | |")
    # What a per-preemption overhead would have to cost to add the missing fixed part to checkpoint-nvm.
    need = [((fa - a) * r["priority-kill"]["waste_core_hours"] * 3600 / sum(r["checkpoint-nvm"]["preemptions"].values()),
             (fb - a) * r["priority-kill"]["waste_core_hours"] * 3600 / sum(r["checkpoint-nvm"]["preemptions"].values()))
            for (a, _), r in zip(ours_fixed, runs)]
    fixed = sorted(a for a, _ in ours_fixed)
    fixed = f"{fixed[0]:.3f}" + (f" to {fixed[-1]:.3f}" if len(fixed) > 1 else "")
    runs_named = "run 1" if len(runs) == 1 else f"runs 1-{len(runs)}"
    print(f"\nOur waste is the dump, queue and restore time, so it falls with the storage's speed to nearly "
          f"nothing (fixed part {fixed} of kill's). "
          f"The paper's falls far less from HDD to NVM (58x faster): about {fa:.2f} (A) or {fb:.3f} (B) of kill's "
          "waste stays whatever the storage. The paper does not say what that part is (its waste counts \"CPU-time "
          "wasted due to repeatedly killing jobs, and from preemption and checkpoint overhead\"; its simulator's "
          "per-preemption costs are not given). Adding it to checkpoint-nvm would take a fixed overhead of "
          + ", ".join(f"{x:.0f} (A) or {y:.0f} (B)" for x, y in need)
          + f" core-seconds per preemption ({runs_named}), a constant that nothing but this figure sets: NVM's "
          "ratio is out of reach without one tuned to it. The part that does follow the storage (the line's "
          f"slope, kill's waste per s/GB) is {min(b for _, b in ours_fixed) / sa:.1f}-"
          f"{max(b for _, b in ours_fixed) / sa:.1f}x the paper's under A and "
          f"{min(b for _, b in ours_fixed) / sb:.1f}-{max(b for _, b in ours_fixed) / sb:.1f}x under B: "
          "against the work a kill loses, our dumps cost more than the paper's, which is why HDD is off under B "
          "while SSD and NVM, whose dumps are short, fall within 0.1. That slope is set by the victims' images "
          "(their memory) against how long they had run when preempted, which the paper gives for neither "
          "its trace's tasks nor its simulator's: a workload difference, not a constant to tune.")


def sweep():
    args = ["sweep", "--scenario", "two-job", "--vary", f"nvm_mb_s={BANDWIDTHS}", "--policies", ",".join(SWEEP),
            "--metric", SWEEP_METRICS]
    print("\n## Two-job sensitivity sweep (§3.3.3, Fig. 4 and 6)\n")
    print("A 5 GB, 60 s low-priority job (free level) preempted after 30 s by an equal high-priority job "
          "(production level) on one machine; the checkpoint bandwidth (dump and restore, MB/s) varies. "
          "`priority` is the paper's wait, `priority-kill` its kill.\n")
    args += ["--out", SWEEP_OUT]
    print("```sh\npliant " + " ".join(args) + "\n```\n")
    print("```text\n" + pliant(*args).rstrip() + "\n```\n")
    for metric in SWEEP_METRICS.split(","):
        svg = f"sweep_{metric.replace('.', '_')}.svg"
        print(f"![{metric}]({SWEEP_OUT.removeprefix('docs/results/')}/{svg})")
    print()
    doc = json.loads(pliant(*args, "--format", "json"))
    series = {(m["metric"], s["policy"]): s["mean"] for m in doc["metrics"] for s in m["series"]}
    high = "classes.production.jct.mean"
    bws = [float(v) for v in doc["values"]]
    kill, wait = series[(high, "priority-kill")], series[(high, "priority")]
    ckpt, adapt = series[(high, "checkpoint-nvm")], series[(high, "adaptive-nvm")]
    print("Checks:\n")
    worse = [bw for bw, c, k in zip(bws, ckpt, kill) if c > k]
    check(bool(worse) and min(bws) in worse,
          f"always checkpointing is worse than kill for the high-priority job at low bandwidth "
          f"(worse at {', '.join(f'{b:g}' for b in worse)} MB/s)")
    check(all(a <= w for a, w in zip(adapt, wait)), "adaptive is never worse than wait for the high-priority job "
          "(the paper's Fig. 6 claim)")
    best = [min(k, w) for k, w in zip(kill, wait)]
    over = [(bw, a - b) for bw, a, b in zip(bws, adapt, best) if a > b + 1e-9]
    check(not over, "adaptive is never worse than the better of kill and wait for the high-priority job (a "
          "stricter reading than the paper's)" + ("" if not over else "; it is worse by the dump time where it checkpoints: "
                        + ", ".join(f"+{d:.2f} s at {bw:g} MB/s" for bw, d in over)))
    if over:
        print("\nWhy the last point cannot hold: in the paper's own experiment \"the high priority job starts "
              "executing after the checkpointing is finished\" (§3.3.3), and Algorithm 1 checkpoints whenever the "
              "victim's progress (30 s here) exceeds dump + restore + queue time. So wherever adaptive checkpoints, "
              "the high-priority job runs one dump later than under kill, and kill is always the better of kill "
              "and wait for it (60 s against 90 s). Only a policy that always kills could meet the wording; the "
              "paper claims what holds above: \"never worse than the wait approach ... approaches the kill-based "
              "policy\" as bandwidth grows (§4.2).")


day = google_runs(1)
kill_h = round(mean([r["priority-kill"]["waste_core_hours"] for r in day]), -3)
kill_pct = [r["priority-kill"]["waste_pct_capacity"] for r in day]
print("# Checkpoint-based preemption\n")
print("Generated by `python3 docs/results/checkpoint.py > docs/results/checkpoint.md` "
      "(after `cargo build --release`). Paper: Li, Pu, Chen, Talwar, Milojicic, *Improving Preemptive Scheduling with Application-Transparent Checkpointing in Shared Clusters*, Middleware 2015.")
print("Tier rates from Table 3 (5 GB first dump: HDD 169.18 s, SSD 43.73 s, NVM 2.92 s; restores at the same "
      "rate), incremental dumps write 10 %, remote restores add 10 Gb/s network transfer and a 1.5x DFS read "
      "penalty, one dump or restore at a time per node.")
print("\nWaste is compared by its order, not its size. The paper's figure is not self-consistent: 3,400 "
      "core-hours called \"about 35 % of the total capacity\" imply a capacity of about 9,700 core-hours a day "
      "(about 400 cores), while the same section says the day's jobs require over 22,000 cores, against "
      f"which 3,400 core-hours are 0.6 %. `google-day` at scale 1 loses about {kill_h:,.0f} core-hours to kills, "
      f"{min(kill_pct):.1f}-{max(kill_pct):.1f} % of its capacity.")
google_tables(1, day)
google_tables(0.1, google_runs(0.1))
print("\nThe Google 2011 trace itself (part 00000 at its real load, services included) is replayed under "
      "these policies in `real-traces.md`: there the tasks kill preempts had run a few minutes, less than "
      "an HDD dump holds a victim's cores, and waste does not keep Fig. 3's order.")
sweep()
