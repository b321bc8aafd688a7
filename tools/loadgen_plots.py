"""PNG charts of load-generator runs (tools/loadgen.py --plot DIR).

  latency_cdf.png               TTFT and end-to-end latency CDFs, one line per run
  throughput_vs_concurrency.png output tokens/s and p50 TPOT against concurrency
  ttft_over_time.png            each request's TTFT against when it started

A run is {"summary": ..., "results": [...]} as loadgen.py builds it.
"""
import os

import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt  # noqa: E402


def label(run):
    s = run["summary"]
    return f"concurrency {s['concurrency']}" if s["concurrency"] else f"rate {s['rate']}/s"


def ok_values(run, key):
    return sorted(r[key] for r in run["results"] if not r.get("error") and r.get(key) is not None)


def cdf(ax, values, name):
    if values:
        n = len(values)
        ax.step([v * 1000 for v in values], [(i + 1) / n for i in range(n)], where="post", label=name)


def latency_cdf(runs, title, path):
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    for ax, key, name in zip(axes, ("ttft", "e2e"), ("time to first token", "end-to-end latency")):
        for run in runs:
            cdf(ax, ok_values(run, key), label(run))
        ax.set_xlabel(f"{name} (ms)")
        ax.set_ylabel("fraction of requests")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle(f"Latency CDF{' - ' + title if title else ''}")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def throughput(runs, title, path):
    runs = [r for r in runs if r["summary"]["concurrency"]]
    x = [r["summary"]["concurrency"] for r in runs]
    fig, ax = plt.subplots(figsize=(7, 4.2))
    ax.plot(x, [r["summary"]["output_tok_per_s"] for r in runs], "o-", label="output tokens/s")
    ax.set_xlabel("concurrent clients")
    ax.set_ylabel("output tokens/s")
    ax.set_xscale("log", base=2)
    ax.grid(alpha=0.3)
    tpot = ax.twinx()
    tpot.plot(x, [(r["summary"]["tpot_p50_s"] or 0) * 1000 for r in runs], "s--", color="tab:orange",
              label="p50 time per output token")
    tpot.set_ylabel("p50 TPOT (ms)")
    lines = ax.get_legend_handles_labels()[0] + tpot.get_legend_handles_labels()[0]
    ax.legend(lines, [ln.get_label() for ln in lines], fontsize=8, loc="upper left")
    fig.suptitle(f"Throughput against concurrency{' - ' + title if title else ''}")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def ttft_over_time(runs, title, path):
    fig, ax = plt.subplots(figsize=(8, 4.2))
    for run in runs:
        done = [r for r in run["results"] if not r.get("error") and r.get("ttft") is not None]
        ax.scatter([r["start"] for r in done], [r["ttft"] * 1000 for r in done], s=10, label=label(run))
    ax.set_xlabel("request start (s into its run)")
    ax.set_ylabel("time to first token (ms)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.suptitle(f"TTFT over time{' - ' + title if title else ''}")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def write_charts(runs, out_dir, title=""):
    """Writes the three charts into out_dir; returns their paths."""
    os.makedirs(out_dir, exist_ok=True)
    paths = []
    for name, draw in (("latency_cdf.png", latency_cdf), ("throughput_vs_concurrency.png", throughput),
                       ("ttft_over_time.png", ttft_over_time)):
        path = os.path.join(out_dir, name)
        draw(runs, title, path)
        paths.append(path)
    return paths
