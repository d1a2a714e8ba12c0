#!/usr/bin/env python3
"""Prints the "§5.2's long-job gap, run by run" section of docs/results/bigc.md:
§5.2's long-job figures on the developers' seeds and on held-out ones, ip
beside them, and the runs that test each mechanism the paper describes. `bigc.py` prints it;
run alone from the repository root after `cargo build --release`:
    python3 docs/results/bigc_gap.py
"""
import json
import statistics
import subprocess

PLIANT = "target/release/pliant"
LOADS = ["low-load", "high-load", "multi-load"]
SEED_SETS = [("1-3", [1, 2, 3]), ("101, 202, 303", [101, 202, 303])]
POLICIES = ["fifo", "priority", "reserve", "kill", "ip", "gp"]
# BIG-C §5.2: gp's tail over fifo's per load; kill "on average 140 % degradation"; failed
# long jobs under kill 13 / 15 / 20 %.
PAPER_GP = {"low-load": 1.13, "high-load": 1.61, "multi-load": 1.17}
PAPER_FAILED = {"low-load": "13 %", "high-load": "15 %", "multi-load": "20 %"}
WORKING_SETS = ["0.8", "0.5", "0"]


def command(scenario, seed, policies, sets=()):
    cmd = [PLIANT, "simulate", "--scenario", scenario, "--seed", str(seed), "--policies", ",".join(policies)]
    for s in sets:
        cmd += ["--set", s]
    return cmd + ["--barrier-idle", "--format", "json"]


def simulate(scenario, seed, policies, sets=()):
    out = subprocess.run(command(scenario, seed, policies, sets), check=True, capture_output=True, text=True).stdout
    return {r["policy"]: r for r in json.loads(out)["results"]}


def long_of(r):
    return r["classes"]["long"]


def table():
    """The done-when table per seed set; returns its rows."""
    print("| scenario | seed | kill / fifo | gp / fifo (paper) | ip / fifo | reserve / fifo | priority / fifo "
          "| gp below kill and ip | kill failed (paper) | ip / fifo median |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    rows = []
    for label, seeds in SEED_SETS:
        for sc in LOADS:
            for seed in seeds:
                r = simulate(sc, seed, POLICIES)
                p90 = {p: long_of(r[p])["jct"]["p90"] for p in POLICIES}
                ratio = {p: p90[p] / p90["fifo"] for p in POLICIES}
                below = p90["gp"] < min(p90["kill"], p90["ip"])
                kill = long_of(r["kill"])
                ip_med = long_of(r["ip"])["jct"]["p50"] / long_of(r["fifo"])["jct"]["p50"]
                rows.append({"set": label, "sc": sc, "seed": seed, "ratio": ratio, "below": below,
                             "failed": kill["failed"], "jobs": kill["jobs"], "ip_med": ip_med})
                print(f"| {sc} | {seed} | {ratio['kill']:.2f} | {ratio['gp']:.2f} ({PAPER_GP[sc]}) "
                      f"| {ratio['ip']:.2f} | {ratio['reserve']:.2f} | {ratio['priority']:.2f} "
                      f"| {'yes' if below else '**no**'} | {kill['failed']} of {kill['jobs']} ({PAPER_FAILED[sc]}) "
                      f"| {ip_med:.2f} |")
    return rows


def summary(rows):
    print("\n| seeds | kill / fifo, mean (paper 2.40) | gp / fifo per load, mean (paper 1.13, 1.61, 1.17) "
          "| gp below kill and ip | runs where kill fails a long job |")
    print("|---|---|---|---|---|")
    for label, _ in SEED_SETS:
        rs = [r for r in rows if r["set"] == label]
        kill = statistics.mean(r["ratio"]["kill"] for r in rs)
        gp = ", ".join(f"{statistics.mean(r['ratio']['gp'] for r in rs if r['sc'] == sc):.2f}" for sc in LOADS)
        print(f"| {label} | {kill:.2f} | {gp} | {sum(r['below'] for r in rs)} of {len(rs)} "
              f"| {sum(r['failed'] > 0 for r in rs)} of {len(rs)} |")


def working_sets():
    """gp on low-load under other working sets: its tail and the barrier's idle cores; returns
    the ratios per working set."""
    print("| working_set_fraction | gp / fifo long p90, low-load seeds 1-3 | executors idle at a barrier, "
          "core-hours (priority: same seeds) |")
    print("|---|---|---|")
    out = {}
    for ws in WORKING_SETS:
        ratios, idle, prio = [], [], []
        for seed in [1, 2, 3]:
            r = simulate("low-load", seed, ["fifo", "priority", "gp"], [f"working_set_fraction={ws}"])
            ratios.append(long_of(r["gp"])["jct"]["p90"] / long_of(r["fifo"])["jct"]["p90"])
            idle.append(r["gp"]["barrier_idle_core_hours"])
            prio.append(r["priority"]["barrier_idle_core_hours"])
        out[ws] = ratios
        print(f"| {ws} | {' / '.join(f'{x:.2f}' for x in ratios)} | {' / '.join(f'{x:.0f}' for x in idle)} "
              f"({' / '.join(f'{x:.0f}' for x in prio)}) |")
    return out


def section():
    print("\n## §5.2's long-job gap, run by run\n")
    print("Long Spark jobs' p90 over fifo's (failed jobs left out, as in the paper), per run, on the "
          "developers' seeds and on seeds the project never tuned on. Kill takes a random container of the "
          "job Algorithm 2 picks (see below). Command per scenario S and seed N:\n")
    print("- `" + " ".join(command("S", "N", POLICIES)) + "`\n")
    rows = table()
    summary(rows)
    low = [r for r in rows if r["sc"] == "low-load"]
    worst_ip = sum(r["ratio"]["ip"] > max(r["ratio"]["kill"], r["ratio"]["gp"]) for r in low)
    over_reserve = sum(r["ratio"]["ip"] > r["ratio"]["reserve"] for r in low)
    print(f"\nip under low-load: its tail is above kill's and gp's on {worst_ip} of {len(low)} runs, as §5.2 says "
          "(\"the worst median and tail performance among all schedulers under low-load\"), and its median is "
          f"{min(r['ip_med'] for r in low):.2f}-{max(r['ip_med'] for r in low):.2f}x fifo's (the paper: suspension "
          "\"even affected the median JCT\"). It is above reserve's on "
          f"{over_reserve} of {len(low)}: our reserve (long jobs on 40 % of the nodes) queues long jobs far "
          "longer than the paper's did, where reserve beat kill and ip.")
    print("\n### What each mechanism the paper describes does to the gap\n")
    print("**The working set a GP step meets** (§3.3: \"requests are usually based on their peak demands\"; §5.1: "
          "executors' memory \"large enough to prevent tasks from running into the Out-Of-Memory error\"). The "
          "simulator already gives back the slack above a task's working set first, at once, and freezes a "
          "shrunk task only below it; what decides is how large the working set is, which the paper does not "
          "give. Lowering it for every task (`--set working_set_fraction=W`) does not bring gp near the paper's "
          "low-load 1.13, even with none at all (0: nothing ever swaps), and the cores idle at stage barriers "
          "stay 4-11x strict priority's: with less to swap, Algorithm 2 shaves r⃗_GP off more executors instead "
          "of freezing a few (a frozen one leaves the set, line 8, and frees all its cores), and their siblings "
          "wait at the barrier for the slowed in-flight tasks (`--barrier-idle`):\n")
    ws = working_sets()
    print(f"\nAt 0 gp / fifo is {min(ws['0']):.2f}-{max(ws['0']):.2f}x.")
    prio = [r["ratio"]["priority"] for r in rows]
    print(f"\nStrict priority (short jobs first, nothing preempted) costs the long jobs {min(prio):.2f}-"
          f"{max(prio):.2f}x fifo's tail in the runs above, about the paper's gp figures on low- and multi-load; "
          "our gp's excess over it is the barrier: the cores held by "
          "executors waiting for a shrunk or frozen sibling. No working set was made a default: none has a "
          "source, and none closes the gap.")
    print("\n**The victims kill takes.** §5.1's kill is YARN's capacity scheduler; §4.3 has it pick the job with "
          "the longest remaining time (Algorithm 2, whose line 5 leaves the container open), and §2.2 says YARN "
          "\"kills tasks selected randomly from the long job\". Kill now takes a random container of that job "
          "(`ContainerOrder::Random`, seeded by the monitor round's instant), where it took the youngest. It "
          "makes kill no harsher at the p90: on seeds 1-3 the youngest-first order (commit ad41b8c) gave kill / "
          "fifo 1.31 / 1.41 / 1.51, 1.59 / 1.29 / 1.62, 1.65 / 1.60 / 1.60 (mean 1.51, low / high / multi-load), "
          "the random order 1.44 on average, and high-load's failed jobs went from 6 / 6 / 5 to 10 / 3 / 11 of "
          "46 / 46 / 39. A random victim is often an old executor whose map output a running stage reads: "
          "the stage fails on the fetch, and past Spark's limits the whole attempt; the jobs it hurts most fail "
          "and leave the p90.")
    print("\n**A relaunched executor's start-up.** None of the papers here gives one (SSR §II-C names a "
          "\"cold\" JVM, without a figure), and a JVM started on this machine is no Spark executor, so no "
          "start-up was made a default. A one-off run (not kept, seeds 1-3) that held every relaunched task "
          "idle for 10 s or 30 s before it worked moved kill / fifo by -0.11 to +0.04 per run, and lowered its "
          "mean: seconds per relaunch are small against 40 s stage tasks and a lost stage.")
    print("\nSo the §5.2 gap keeps both sides. Kill: the model's kill harms the jobs it kills about as much as "
          "the paper's (on low-load seed 1 at ad41b8c the relaunched jobs that finished took 1.5-2.1x their fifo "
          "JCT), but the p90 falls on jobs it hurt less (there, on one it never killed), and the ones it hurts "
          "most fail and are left out; what makes the paper's kill 2.4x at "
          "the tail is not found. gp: its excess over strict priority is the barrier, which no mechanism the "
          "paper describes removes here; BIG-C §3.2 implies its Spark ran with speculative execution (\"We also "
          "disable speculative execution for suspended tasks\"), which would hand a shrunk executor's slow "
          "last tasks to the idle siblings: the next mechanism to model, not done.")


if __name__ == "__main__":
    section()
