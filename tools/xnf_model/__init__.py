# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""
The batching model behind `xnf model`: it predicts the batch sizes and the
loss of a poll-mode packet processor and dimensions queues and cores, with
the discrete-time model of ../shared/papers/batching-model-nfv-routers.txt.
model.py holds the math, readers.py the readers of xnf's JSON and of the
bench harness's sweeps, output.py the text, JSON, Markdown and CSV, plots.py
the figures, cli.py the command line, which `python3 -m xnf_model` runs
(__main__.py); this file gathers the names a caller or a test needs.
"""
from .model import (ModelError, Params, Service, capacity_nodes,
                    count_ccdf, interarrival, jsd, normalise, predict,
                    rel_error)
from .readers import (load_json, read_measured, until_last_packet,
                      worker_busy, worker_counts, worker_loss, worker_rate,
                      xdp_sweep)
from .cli import (build_parser, dimension, main, miss_reasons, mixture,
                  own_poll_line, parse_rate, validate)

__all__ = ["ModelError", "Params", "Service", "build_parser",
           "capacity_nodes", "count_ccdf",
           "dimension", "interarrival", "jsd", "load_json", "main",
           "miss_reasons", "mixture", "normalise", "own_poll_line",
           "parse_rate", "predict",
           "read_measured", "rel_error", "until_last_packet", "validate",
           "worker_busy", "worker_counts", "worker_loss", "worker_rate",
           "xdp_sweep"]
