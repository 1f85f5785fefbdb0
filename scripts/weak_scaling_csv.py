"""Turns bm_fedavg_weak_scaling's Google Benchmark JSON into the CSV that
docs/weak_scaling.csv holds and scripts/weak_scaling.gnuplot plots: one row
per (mode, data placement, n), with the round's wall time and the per-device
figures."""
import csv
import json
import sys

COLUMNS = ["mode", "data", "groups", "devices", "ms_per_round", "flops_per_device",
           "peak_bytes_per_device", "measured_peak_bytes_per_device",
           "bytes_sent_per_device", "collectives", "compile_seconds"]


def rows(report):
    for b in report["benchmarks"]:
        if b.get("error_occurred"):
            raise SystemExit(f"{b['name']}: {b.get('error_message')}")
        # BM_FedAvgRound/<variant>/<n>/min_time:.../manual_time
        variant = b["name"].split("/")[1]
        mode, _, placement = variant.partition("_")
        time_ms = b["real_time"] * {"ms": 1, "us": 1e-3, "ns": 1e-6, "s": 1e3}[b["time_unit"]]
        yield {
            "mode": mode,
            "data": "replicated" if placement == "replicated_data" else "split",
            "groups": int(b["groups"]),
            "devices": int(b["devices"]),
            "ms_per_round": round(time_ms, 3),
            "flops_per_device": int(b["flops_per_device"]),
            "peak_bytes_per_device": int(b["peak_bytes_per_device"]),
            "measured_peak_bytes_per_device": int(b["measured_peak_bytes_per_device"]),
            "bytes_sent_per_device": int(b["bytes_sent_per_device"]),
            "collectives": int(b["collectives"]),
            "compile_seconds": round(b["compile_seconds"], 2),
        }


def main():
    source, target = sys.argv[1], sys.argv[2]
    with open(source) as f:
        report = json.load(f)
    with open(target, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=COLUMNS)
        writer.writeheader()
        for row in sorted(rows(report), key=lambda r: (r["data"], r["mode"], r["groups"])):
            writer.writerow(row)


if __name__ == "__main__":
    main()
