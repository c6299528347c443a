#!/usr/bin/python3
"""Makes the real test models of the ONNX compiler (lightmetal compile).

Usage: make_onnx_models.py --out DIR [--data DIR] [--epochs N] [--threads N]

Needs only Debian's python3-torch and python3-numpy (python3-onnx, when
installed, is used to check the exported files). The build runs it once and
keeps its outputs in the build tree (target onnx_models); nothing here is
needed to build lightmetal or to replay a binary.

Writes into --out:
  cnn.onnx               a small CNN trained on Fashion-MNIST (opset 13).
                         input  "image"  float32 [batch, 1, 28, 28]
                         output "logits" float32 [batch, 10]
                         ("batch" is a dynamic axis).
  cnn_test_images.npy    float32 [10000, 1, 28, 28]: the test images,
                         preprocessed exactly as the model expects them.
  cnn_test_labels.npy    int64 [10000]: their classes (0..9).
  cnn_meta.json          PyTorch's fp32 test accuracy of the exported model
                         (eval mode) and the training settings.
  cnn_state.pt           the CNN's state dict (scripts/bench_torch_cnn.py
                         rebuilds the torch model from it).
  transformer.onnx       a tiny transformer encoder with fixed random weights
                         (opset 13). input  "tokens" int64 [1, 16] (ids in
                         0..99); output "hidden" float32 [1, 16, 32].
  transformer_tokens.npy    int64 [1, 16]: an input for it.
  transformer_expected.npy  float32 [1, 16, 32]: PyTorch's fp32 output for it.

Preprocessing of the CNN's input (what a compiled model must be fed): the
Fashion-MNIST IDX pixels (uint8, row-major 28x28, 0 = background) are
converted to float32 and divided by 255.0, giving values in [0, 1]; no mean or
standard-deviation normalisation, no padding, one channel: image[n, 0, y, x] =
pixel[n][y][x] / 255.0. The logits are not soft-maxed: the predicted class is
their argmax.

BatchNorm is exported in inference form: the model is put in eval mode and
exported with TrainingMode.PRESERVE, which keeps each BatchNormalization node
(with the running mean and variance as inputs) instead of letting the exporter
fold it into the preceding Conv; the compiler is meant to do that fusion.

The transformer: token embedding (100 ids -> 32) plus a learned positional
embedding [1, 16, 32]; 2 nn.TransformerEncoderLayer (d_model 32, 4 heads,
feed-forward 64, exact erf GELU, post-norm, dropout 0, batch_first); a final
LayerNorm; a linear head 32 -> 32. Every parameter is drawn from the seeded
generator (the layers differ, LayerNorm's scale and shift are not 1 and 0).
At opset 13 LayerNorm is exported decomposed (ReduceMean, Sub, Pow, Sqrt,
Div, Mul, Add) and GELU as x * (1 + Erf(x / sqrt 2)) / 2; attention has
MatMul, Softmax, Reshape and Transpose plus Shape/Gather/Slice arithmetic on
the (fixed) shapes that constant folding removes.

Everything is seeded and runs with a fixed number of threads and PyTorch's
deterministic algorithms, so the same machine makes the same files (only
cnn_meta.json's train_seconds varies).
"""

import argparse
import gzip
import json
import os
import sys
import time
import warnings

try:
    import numpy as np
    import torch
    import torch.nn as nn
except ImportError as e:
    sys.exit(
        f"make_onnx_models: {e}: the test models need Debian's python3-torch and "
        "python3-numpy (run scripts/install-deps.sh) and /usr/bin/python3"
    )

# Where Debian's dataset-fashion-mnist package keeps its files: the default of
# the mlp_fashion_mnist example's build rule (LM_FASHION_MNIST_SOURCE) too.
DEFAULT_DATA = "/usr/share/datasets/fashion-mnist"

SEED = 20240601
CNN_SETTINGS = {
    "epochs": 3,
    "batch_size": 128,
    "optimizer": "Adam",
    "learning_rate": 0.002,
    "lr_schedule": "learning rate times 0.5 after each epoch",
    "weight_decay": 0.0,
    "loss": "cross entropy",
    "shuffle": "torch.randperm each epoch from a seeded generator",
}

TRANSFORMER = {
    "vocab": 100,
    "seq_len": 16,
    "d_model": 32,
    "nhead": 4,
    "dim_feedforward": 64,
    "num_layers": 2,
    "activation": "gelu",
    "head_out": 32,
}


class FashionCNN(nn.Module):
    """conv 1->8 3x3 pad 1, BN, ReLU, maxpool 2 (28 -> 14); conv 8->16 3x3 (no
    padding), BN, ReLU, maxpool 2 (12 -> 6); flatten (16*6*6 = 576); linear 10."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 16, 3)
        self.bn2 = nn.BatchNorm2d(16)
        self.pool = nn.MaxPool2d(2)
        self.relu = nn.ReLU()
        self.fc = nn.Linear(16 * 6 * 6, 10)

    def forward(self, image):
        x = self.pool(self.relu(self.bn1(self.conv1(image))))
        x = self.pool(self.relu(self.bn2(self.conv2(x))))
        return self.fc(torch.flatten(x, 1))


class TinyTransformer(nn.Module):
    """Token embedding + learned positional embedding, nn.TransformerEncoder
    (post-norm layers, no dropout), final LayerNorm, linear head."""

    def __init__(self, cfg=TRANSFORMER):
        super().__init__()
        self.tok = nn.Embedding(cfg["vocab"], cfg["d_model"])
        self.pos = nn.Parameter(torch.randn(1, cfg["seq_len"], cfg["d_model"]) * 0.1)
        layer = nn.TransformerEncoderLayer(
            cfg["d_model"],
            cfg["nhead"],
            dim_feedforward=cfg["dim_feedforward"],
            dropout=0.0,
            activation=cfg["activation"],
            batch_first=True,
        )
        # enable_nested_tensor=False: the nested-tensor fast path is not
        # exportable and would only change how padding masks run.
        self.encoder = nn.TransformerEncoder(
            layer, cfg["num_layers"], enable_nested_tensor=False
        )
        self.norm = nn.LayerNorm(cfg["d_model"])
        self.head = nn.Linear(cfg["d_model"], cfg["head_out"])

    def forward(self, tokens):
        x = self.tok(tokens) + self.pos
        return self.head(self.norm(self.encoder(x)))


def setup_determinism(threads):
    torch.manual_seed(SEED)
    np.random.seed(SEED)
    torch.set_num_threads(threads)
    # Intra-op threads only: the inter-op pool must be set before first use.
    try:
        torch.set_num_interop_threads(1)
    except RuntimeError:
        pass
    torch.use_deterministic_algorithms(True)


def read_idx(data_dir, name, magic, count, item_shape):
    """Reads an IDX file (uncompressed, or the package's .gz) and checks its
    header; returns a uint8 array of shape (count, *item_shape)."""
    path = os.path.join(data_dir, name)
    if os.path.exists(path):
        with open(path, "rb") as f:
            raw = f.read()
    elif os.path.exists(path + ".gz"):
        with gzip.open(path + ".gz", "rb") as f:
            raw = f.read()
    else:
        sys.exit(
            f"make_onnx_models: {path}[.gz] not found: install Debian's "
            "dataset-fashion-mnist (scripts/install-deps.sh) or pass --data DIR"
        )
    ndim = len(item_shape) + 1
    header = np.frombuffer(raw[: 4 + 4 * ndim], dtype=">u4")
    expected = [count] + list(item_shape)
    if header[0] != magic or list(header[1:]) != expected:
        sys.exit(f"make_onnx_models: {path} is not the expected IDX file")
    body = np.frombuffer(raw[4 + 4 * ndim :], dtype=np.uint8)
    if body.size != int(np.prod(expected)):
        sys.exit(f"make_onnx_models: {path} is truncated")
    return body.reshape(expected)


def preprocess(pixels):
    """uint8 [N, 28, 28] -> float32 [N, 1, 28, 28] in [0, 1] (see the header)."""
    return (pixels.astype(np.float32) / np.float32(255.0))[:, None, :, :]


def load_fashion_mnist(data_dir):
    train_x = read_idx(data_dir, "train-images-idx3-ubyte", 0x803, 60000, (28, 28))
    train_y = read_idx(data_dir, "train-labels-idx1-ubyte", 0x801, 60000, ())
    test_x = read_idx(data_dir, "t10k-images-idx3-ubyte", 0x803, 10000, (28, 28))
    test_y = read_idx(data_dir, "t10k-labels-idx1-ubyte", 0x801, 10000, ())
    return (
        preprocess(train_x),
        train_y.astype(np.int64),
        preprocess(test_x),
        test_y.astype(np.int64),
    )


def accuracy(model, images, labels, batch=1000):
    model.eval()
    correct = 0
    with torch.no_grad():
        for i in range(0, len(images), batch):
            logits = model(torch.from_numpy(images[i : i + batch]))
            correct += int((logits.argmax(1).numpy() == labels[i : i + batch]).sum())
    return correct / len(images)


def train_cnn(train_x, train_y, epochs):
    model = FashionCNN()
    opt = torch.optim.Adam(
        model.parameters(),
        lr=CNN_SETTINGS["learning_rate"],
        weight_decay=CNN_SETTINGS["weight_decay"],
    )
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
    loss_fn = nn.CrossEntropyLoss()
    gen = torch.Generator().manual_seed(SEED)
    xs, ys = torch.from_numpy(train_x), torch.from_numpy(train_y)
    bs = CNN_SETTINGS["batch_size"]
    for epoch in range(epochs):
        model.train()
        order = torch.randperm(len(xs), generator=gen)
        total, t0 = 0.0, time.time()
        for i in range(0, len(xs), bs):
            idx = order[i : i + bs]
            opt.zero_grad()
            loss = loss_fn(model(xs[idx]), ys[idx])
            loss.backward()
            opt.step()
            total += float(loss) * len(idx)
        sched.step()
        print(
            f"make_onnx_models: cnn epoch {epoch + 1}/{epochs}: "
            f"loss {total / len(xs):.4f} ({time.time() - t0:.1f} s)",
            flush=True,
        )
    model.eval()
    return model


class Output:
    """Writes one output file atomically: the caller writes to .tmp (the
    path yielded), which replaces the file only once complete, so an
    interrupted run never leaves a truncated file that the build would keep."""

    def __init__(self, out, name):
        self.path = os.path.join(out, name)
        self.tmp = self.path + ".tmp"

    def __enter__(self):
        return self.tmp

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            os.replace(self.tmp, self.path)
        elif os.path.exists(self.tmp):
            os.remove(self.tmp)
        return False


def export_cnn(model, path):
    model.eval()
    # PRESERVE with the model in eval mode is inference export; the exporter
    # warns about constant folding in training exports regardless.
    warnings.filterwarnings("ignore", message="It is recommended that constant folding")
    torch.onnx.export(
        model,
        torch.zeros(1, 1, 28, 28),
        path,
        opset_version=13,
        input_names=["image"],
        output_names=["logits"],
        dynamic_axes={"image": {0: "batch"}, "logits": {0: "batch"}},
        training=torch.onnx.TrainingMode.PRESERVE,
        do_constant_folding=True,
    )


def randomize(model):
    """Gives every parameter its own seeded random values. Without this the
    encoder's layers would be identical (nn.TransformerEncoder deep-copies one
    layer) and LayerNorm would be the identity affine map (ones and zeros),
    which a test could not tell from a wrong layer or a missing scale."""
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.dim() >= 2:
                bound = 1.0 / (p.shape[-1] ** 0.5)
                p.uniform_(-bound, bound)
                if name == "tok.weight":
                    p.normal_(0.0, 1.0)
            elif "norm" in name and name.endswith("weight"):
                p.copy_(1.0 + 0.2 * torch.randn_like(p))
            else:
                p.copy_(0.1 * torch.randn_like(p))


def make_transformer():
    torch.manual_seed(SEED + 1)
    model = TinyTransformer()
    randomize(model)
    model.eval()
    gen = torch.Generator().manual_seed(SEED + 2)
    tokens = torch.randint(
        0, TRANSFORMER["vocab"], (1, TRANSFORMER["seq_len"]), generator=gen
    )
    # With gradients enabled the encoder takes its ordinary (exportable) path,
    # the same arithmetic as the exported graph, rather than the fused
    # inference kernel.
    expected = model(tokens).detach()
    return model, tokens, expected


def export_transformer(model, tokens, path):
    torch.onnx.export(
        model,
        tokens,
        path,
        opset_version=13,
        input_names=["tokens"],
        output_names=["hidden"],
        do_constant_folding=True,
    )


def check_onnx(path):
    """Checks the file with python3-onnx when it is installed (the checker
    with full_check also runs ONNX's shape inference); returns the sorted op
    types (or None without onnx). Raises on an invalid model, before the file
    replaces the previous one."""
    try:
        import onnx
    except ImportError:
        print("make_onnx_models: python3-onnx missing: not checking " + path)
        return None
    model = onnx.load(path)
    onnx.checker.check_model(model, full_check=True)
    return sorted({n.op_type for n in model.graph.node})


def save_npy(out, name, array):
    with Output(out, name) as tmp, open(tmp, "wb") as f:
        np.save(f, array)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True, help="directory to write the models to")
    ap.add_argument(
        "--data",
        default=DEFAULT_DATA,
        help="directory of the Fashion-MNIST IDX files, plain or .gz "
        f"(default {DEFAULT_DATA})",
    )
    ap.add_argument("--epochs", type=int, default=CNN_SETTINGS["epochs"])
    ap.add_argument(
        "--threads",
        type=int,
        default=2,
        help="PyTorch threads (fixed so that runs repeat; default 2)",
    )
    args = ap.parse_args()
    start = time.time()
    os.makedirs(args.out, exist_ok=True)
    setup_determinism(args.threads)

    train_x, train_y, test_x, test_y = load_fashion_mnist(args.data)
    t0 = time.time()
    cnn = train_cnn(train_x, train_y, args.epochs)
    train_s = time.time() - t0
    acc = accuracy(cnn, test_x, test_y)
    print(f"make_onnx_models: cnn test accuracy (PyTorch fp32) {acc * 100:.2f}%")

    with Output(args.out, "cnn.onnx") as tmp:
        export_cnn(cnn, tmp)
        ops = {"cnn.onnx": check_onnx(tmp)}
    # Saved through a file object: torch.save would otherwise name the
    # archive's records after the (temporary) file name.
    with Output(args.out, "cnn_state.pt") as tmp, open(tmp, "wb") as f:
        torch.save(cnn.state_dict(), f)
    save_npy(args.out, "cnn_test_images.npy", test_x)
    save_npy(args.out, "cnn_test_labels.npy", test_y)
    settings = dict(CNN_SETTINGS, epochs=args.epochs)
    meta = {
        "model": "cnn.onnx",
        "input": {"name": "image", "dtype": "float32", "shape": ["batch", 1, 28, 28]},
        "output": {"name": "logits", "dtype": "float32", "shape": ["batch", 10]},
        "preprocessing": "uint8 pixel / 255.0 as float32, [N, 1, 28, 28]; no normalisation",
        "test_images": 10000,
        "test_accuracy": acc,
        "opset": 13,
        "training": settings,
        "seed": SEED,
        "threads": args.threads,
        "train_seconds": round(train_s, 1),
        "torch_version": torch.__version__,
    }
    with Output(args.out, "cnn_meta.json") as tmp, open(tmp, "w") as f:
        json.dump(meta, f, indent=2)
        f.write("\n")

    tf, tokens, expected = make_transformer()
    with Output(args.out, "transformer.onnx") as tmp:
        export_transformer(tf, tokens, tmp)
        ops["transformer.onnx"] = check_onnx(tmp)
    save_npy(args.out, "transformer_tokens.npy", tokens.numpy().astype(np.int64))
    save_npy(args.out, "transformer_expected.npy", expected.numpy().astype(np.float32))

    for name, types in ops.items():
        if types is not None:
            print(f"make_onnx_models: {name} ops: {' '.join(types)}")
    print(f"make_onnx_models: done in {time.time() - start:.1f} s")


if __name__ == "__main__":
    main()
