#!/usr/bin/env python3
"""Builds a day-long Google 2011 workload at the trace's real density from the
parts at hand, for the benchmark in docs/benchmarks.md.

    pliant trace import google2011/ -o part0.jsonl              # part 00000
    pliant trace import google2011-parts-15-17/ -o mid.jsonl    # parts 00015-00017
    scripts/google-real-day.py part0.jsonl mid.jsonl > day.jsonl

How: the long-running services of part 00000 (jobs named `ID@service`, the
tasks already up when the trace starts: ≈131,000 tasks, ≈55 % of the
machines' CPU) run the whole day, from 600 s to 86,400 s. Every other job of
part 00000 (its 600-5,611 s) and of the three middle parts (their
75,769-90,801 s) is laid end to end, part 00000's batch then the middle
parts' batch, again and again until the day is full; copy k of a job is named
`ID.k` (before any `@ended`, so its kind survives). The cluster is part
00000's. Jobs are written in submission order.
"""
import json
import sys

DAY = 86_400.0
START = 600.0


def read(path):
    with open(path) as f:
        cluster = json.loads(next(f))
        jobs = [json.loads(line)["job"] for line in f if line.strip()]
    return cluster, jobs


def renamed(name, k):
    base, at, kind = name.partition("@")
    return f"{base}.{k}{at}{kind}"


def main():
    cluster, first = read(sys.argv[1])
    _, middle = read(sys.argv[2])
    services = [j for j in first if j["name"].endswith("@service")]
    batches = [[j for j in first if not j["name"].endswith("@service")], middle]
    out = []
    for j in services:
        for p in j["phases"]:
            for t in p["tasks"]:
                t["duration_s"] = t["estimate_s"] = DAY - j["submit_s"]
        out.append(j)
    at, k = START, 0
    while at < DAY:
        for jobs in batches:
            lo = min(j["submit_s"] for j in jobs)
            hi = max(j["submit_s"] for j in jobs)
            for j in jobs:
                submit = at + j["submit_s"] - lo
                if submit < DAY:
                    out.append(dict(j, name=renamed(j["name"], k), submit_s=submit))
            at += hi - lo
            k += 1
    out.sort(key=lambda j: j["submit_s"])
    w = sys.stdout
    w.write(json.dumps(cluster, separators=(",", ":")) + "\n")
    for j in out:
        w.write(json.dumps({"job": j}, separators=(",", ":")) + "\n")


if __name__ == "__main__":
    main()
