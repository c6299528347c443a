#!/usr/bin/python3
"""PyTorch CPU inference speed of the Fashion-MNIST CNN: the reference of the
benchmark onnx_cnn_vs_torch.

Usage: bench_torch_cnn.py --state DIR/cnn_state.pt [--threads N] [--batch B]
                          [--seconds S] [--images FILE.npy]

Rebuilds the CNN of scripts/make_onnx_models.py (the same class, imported from
it) from its state dict, in eval mode, and times torch.no_grad() inference of
batches of B images with torch.set_num_threads(N). The images are the
preprocessed test images (cnn_test_images.npy next to the state file, or
--images), taken B at a time in order. After one untimed warm-up batch it
runs 5 timed rounds of about S/5 seconds each and prints the median rate of
the rounds on one line:

  images_per_s: <value>

Exit status 1, with a message on stderr, when a file is missing or does not
hold what is expected.
"""

import argparse
import os
import statistics
import sys
import time

import numpy as np
import torch

# The model class lives in make_onnx_models.py next to this file; no
# __pycache__ is left in the source tree.
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_onnx_models import FashionCNN  # noqa: E402


def fail(msg):
    sys.exit(f"bench_torch_cnn: {msg}")


def median_rate(run_once, seconds, rounds=5):
    """The median over `rounds` timed rounds of about seconds / rounds each
    of the units per second that run_once() does (it returns its units),
    after one untimed call (first-call allocations and kernel choice)."""
    round_s = seconds / rounds
    rates = []
    run_once()
    for _ in range(rounds):
        n, t0 = 0, time.perf_counter()
        while True:
            n += run_once()
            elapsed = time.perf_counter() - t0
            if elapsed >= round_s:
                break
        rates.append(n / elapsed)
    return statistics.median(rates)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--state", required=True, help="cnn_state.pt from make_onnx_models.py")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--seconds", type=float, default=5.0, help="total timed time")
    ap.add_argument("--images", help="float32 [N, 1, 28, 28] .npy (default: "
                    "cnn_test_images.npy next to --state)")
    args = ap.parse_args()
    if args.threads < 1 or args.batch < 1 or args.seconds <= 0:
        fail("--threads and --batch must be >= 1 and --seconds > 0")

    torch.set_num_threads(args.threads)
    try:
        torch.set_num_interop_threads(1)
    except RuntimeError:
        pass

    model = FashionCNN()
    try:
        state = torch.load(args.state, map_location="cpu")
        model.load_state_dict(state)
    except (OSError, RuntimeError, KeyError) as e:
        fail(f"cannot load the CNN from {args.state}: {e}")
    model.eval()

    images_path = args.images or os.path.join(os.path.dirname(args.state), "cnn_test_images.npy")
    try:
        images = np.load(images_path)
    except (OSError, ValueError) as e:
        fail(f"cannot read {images_path}: {e}")
    if images.dtype != np.float32 or images.ndim != 4 or images.shape[1:] != (1, 28, 28):
        fail(f"{images_path}: expected float32 [N, 1, 28, 28], got {images.dtype} {images.shape}")
    if len(images) < args.batch:
        images = np.resize(images, (args.batch, 1, 28, 28))
    nbatches = len(images) // args.batch
    batches = [
        torch.from_numpy(np.ascontiguousarray(images[i * args.batch : (i + 1) * args.batch]))
        for i in range(nbatches)
    ]

    k = 0

    def one():
        nonlocal k
        model(batches[k % nbatches])
        k += 1
        return args.batch

    with torch.no_grad():
        rate = median_rate(one, args.seconds)
    print(f"images_per_s: {rate:.1f}")


if __name__ == "__main__":
    main()
