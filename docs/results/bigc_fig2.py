#!/usr/bin/env python3
"""Prints the "Fig. 2" section of docs/results/bigc.md: BIG-C's single-job microbenchmark
(scenario `bigc-fig2`), the long job's slowdown per kind under fifo, kill, ip and gp against
the same job alone (`bigc-fig2-alone`), beside the paper's Figure 2. `bigc.py` prints it at
the end of the page; run alone from the repository root after `cargo build --release`:
    python3 docs/results/bigc_fig2.py
"""
import json
import subprocess

PLIANT = "target/release/pliant"
SEEDS = [1, 2, 3]
KINDS = ["spark", "wordcount", "terasort"]
POLICIES = ["fifo", "kill", "ip", "gp"]
# BIG-C §2.2: MapReduce 8 %-64 % (map-heavy wordcount marginal, reduce-heavy terasort the
# most), Spark "on average 70 %", up to 92 %. The text gives no per-kind bars.
PAPER = {"spark": (70, "70 average, up to 92"), "wordcount": (8, "8 (the low end)"),
         "terasort": (64, "64 (the high end)")}
CORES = 26 * 32


def command(scenario, kind, seed, policies):
    return [PLIANT, "simulate", "--scenario", scenario, "--long-jobs", kind, "--seed", str(seed),
            "--policies", ",".join(policies), "--format", "json"]


def simulate(scenario, kind, seed, policies):
    out = subprocess.run(command(scenario, kind, seed, policies), check=True, capture_output=True,
                         text=True).stdout
    return {r["policy"]: r for r in json.loads(out)["results"]}


def used_core_s(result):
    """Core-seconds the run's tasks held: mean CPU use over its makespan."""
    return result["utilization"]["cpu_mean"] * result["makespan_s"] * CORES


def long_jct(result):
    """The long job's JCT as its owner sees it (a failed job resubmitted at once, from scratch)."""
    return result["classes"]["long"]["jct_retry"]["p50"]


def measure(kind, seed):
    """The job alone's JCT, the burst's floor and each policy's slowdown (fractions)."""
    alone = simulate("bigc-fig2-alone", kind, seed, ["fifo"])["fifo"]
    runs = simulate("bigc-fig2", kind, seed, POLICIES)
    # fifo kills nothing: what it holds beyond the job alone is the burst's own core-time.
    burst_core_s = used_core_s(runs["fifo"]) - used_core_s(alone)
    floor = burst_core_s / CORES / long_jct(alone)
    slow = {p: long_jct(runs[p]) / long_jct(alone) - 1 for p in POLICIES}
    failed = runs["kill"]["classes"]["long"]["failed"]
    return long_jct(alone), floor, slow, failed


def section():
    print("\n## Fig. 2: one long job and a burst of short queries\n")
    print("BIG-C §2.2's microbenchmark: one long job alone fills the 26-node cluster and \"a 6-minute burst "
          "of short Spark-SQL queries\" arrives while it runs, the short queue's share 95 % (`short_share`'s "
          "default), killed tasks back in the queue at once. Scenario `bigc-fig2` (`pliant scenarios`): the "
          "`--long-jobs` kind filling every core for about 780 s alone (Spark: 104 executors of ⟨8 CPU, 16 GB⟩; "
          "MapReduce: the kind's mappers and reducers of the other scenarios, their counts multiplied to fill "
          "the cores), and ⟨4 CPU, 4 GB⟩ queries from 180 s to 540 s offering 60 % of the cores. The paper "
          "gives neither the job's length, nor when the burst starts, nor its size; those are the stated "
          "parameters of `Fig2::DEFAULT` (crates/workload/src/scenarios/bigc_fig2.rs), not fitted. Nor does it "
          "say which of its Spark jobs (PageRank, KMeans, Bayes, WordCount) ran with which executor size "
          "(⟨8, 16⟩, ⟨8, 32⟩ or ⟨16, 32⟩, \"depending on the input size\"), so one Spark kind stands for them.\n")
    print("Slowdown = the long job's JCT (owner's view: a failed attempt is resubmitted at once, from scratch) "
          "over the same job's JCT alone, minus 1, mean over seeds 1-3. The floor is what the burst's own "
          "core-time costs any policy: its core-seconds (fifo's used core-time less the job alone's) over "
          "the cluster's cores and the job's JCT alone. Commands, per kind K and seed S:\n")
    print("- `" + " ".join(command("bigc-fig2-alone", "K", "S", ["fifo"])) + "`")
    print("- `" + " ".join(command("bigc-fig2", "K", "S", POLICIES)) + "`\n")
    print("| long job | alone, s | floor | " + " | ".join(POLICIES) + " | kill: seeds with a failed attempt "
          "| paper (kill) | kill - paper, points |")
    print("|---|---|---|" + "---|" * len(POLICIES) + "---|---|---|")
    means = {}
    for kind in KINDS:
        rows = [measure(kind, s) for s in SEEDS]
        n = len(rows)
        alone = sum(r[0] for r in rows) / n
        floor = sum(r[1] for r in rows) / n
        slow = {p: sum(r[2][p] for r in rows) / n for p in POLICIES}
        failed = sum(r[3] for r in rows)
        means[kind] = (floor, slow)
        paper, paper_text = PAPER[kind]
        cells = " | ".join(f"{100 * slow[p]:+.0f} %" for p in POLICIES)
        print(f"| {kind} | {alone:.0f} | {100 * floor:.0f} % | {cells} | {failed} of {n} | {paper_text} "
              f"| {100 * slow['kill'] - paper:+.0f} |")
    kill = {k: 100 * means[k][1]["kill"] for k in KINDS}
    floor = {k: 100 * means[k][0] for k in KINDS}
    order = sorted(KINDS, key=lambda k: kill[k])
    print("\nUnder fifo the queries wait for the long job (it came first), so fifo pays almost nothing; kill, ip "
          "and gp start them at once and pay at least the floor. Under kill the order is "
          + " < ".join(order) + f" (the paper's: wordcount < terasort < Spark); wordcount's kill cost is "
          f"{kill['wordcount'] - floor['wordcount']:.0f} points above its floor (the paper calls wordcount's "
          "\"marginal\"). gp "
          + ("is" if means["spark"][1]["gp"] < means["spark"][1]["kill"] else "is not")
          + " below kill on Spark, the paper's premise for GP.")
    print("\nWhere we miss the paper: its wordcount figure (8 %) is below this burst's floor "
          f"({floor['wordcount']:.0f} %), so at 60 % of the cores no policy could meet it, and the paper does "
          f"not say how large its burst was. terasort misses by {PAPER['terasort'][0] - kill['terasort']:.0f} "
          "points: §2.2 puts terasort's cost in a killed reducer restarting its shuffle over the network; a "
          "killed reducer here loses only its own progress (the model has no shuffle and no network), and a "
          "relaunched container starts at once (no JVM or executor start-up: see \"§5.2's long-job gap, run by "
          "run\" for why none is modelled). Kill takes a random container of the job, as Fig. 2's YARN did. "
          "Nothing here is tuned to the paper.")

if __name__ == "__main__":
    section()
