#!/usr/bin/python3
"""PyTorch CPU speed of one decoder step of the model zoo's fixed-cache
decoder (llama_static_cache): the reference of the benchmark
onnx_decoder_vs_torch.

Usage: bench_torch_decoder.py [--threads N] [--seconds S]

Builds the decoder as scripts/make_onnx_zoo.py does for that case (the same
class and seed, imported from it), in eval mode, and times torch.no_grad()
steps with torch.set_num_threads(N): a token and a position for each of the
case's two sequences and the cache handed back, as examples/onnx_generate
replays the compiled step. After one untimed step it runs 5 timed rounds of
about S/5 seconds each and prints the median rate of the rounds on one
line:

  steps_per_s: <value>
"""

import argparse
import os
import sys

import torch

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_onnx_zoo as zoo  # noqa: E402
from bench_torch_cnn import median_rate  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--seconds", type=float, default=5.0, help="total timed time")
    args = ap.parse_args()
    if args.threads < 1 or args.seconds <= 0:
        sys.exit("bench_torch_decoder: --threads must be >= 1 and --seconds > 0")
    torch.set_num_threads(args.threads)
    try:
        torch.set_num_interop_threads(1)
    except RuntimeError:
        pass

    make, _, inputs, _ = zoo.cases()["llama_static_cache"]
    torch.manual_seed(zoo.SEED)
    model = make()
    zoo.perturb_norms(model)
    model.eval()
    shapes = dict(inputs)
    cache_k = torch.zeros_like(shapes["cache_k"])
    cache_v = torch.zeros_like(shapes["cache_v"])
    rows = shapes["ids"].shape[0]
    ids = torch.zeros(rows, 1, dtype=torch.long)

    step = 0

    def one():
        nonlocal cache_k, cache_v, ids, step
        pos = torch.full((rows, 1), step % cache_k.shape[3])
        logits, cache_k, cache_v = model(ids, pos, cache_k, cache_v)
        ids = logits[:, 0].argmax(-1, keepdim=True)
        step += 1
        return 1

    with torch.no_grad():
        rate = median_rate(one, args.seconds)
    print(f"steps_per_s: {rate:.1f}")


if __name__ == "__main__":
    main()
