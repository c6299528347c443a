#!/usr/bin/python3
"""Makes the ONNX compiler's model zoo: common architectures as PyTorch's
exporter writes them, each with an input and PyTorch's output for it.

Usage: make_onnx_zoo.py --out DIR [--threads N]

Needs Debian's python3-torch, python3-numpy and python3-onnx, and for the
detectors python3-torchvision. The build runs
it once into the build tree (target onnx_models); nothing here is needed to
build lightmetal or to replay a binary.

Writes DIR/<case>/ in the layout of ONNX's backend tests, so that the
conformance harness runs them (`onnx_conformance --data DIR --all`):
  model.onnx                 the exported model (fixed shapes)
  test_data_set_0/input_N.pb   the inputs, in the model's input order
  test_data_set_0/output_N.pb  PyTorch's outputs (eval mode, float32)
and DIR/MANIFEST.txt (one case per line) when every case is written.

The weights are random (seeded), with BatchNorm statistics and LayerNorm
parameters moved off their defaults so that a fusion that drops them shows.
The cases cover what the hand-made node tests do not: whole networks, the
exporter's own patterns (shape arithmetic that folds, causal masks from
Trilu of a bool constant, attention masks from inputs, grids from
Range/meshgrid) and several opsets of the same network.
"""

import argparse
import collections
import math
import os
import shutil
import sys
import warnings

try:
    import numpy as np
    import onnx
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    from onnx import numpy_helper
except ImportError as e:
    sys.exit(
        f"make_onnx_zoo: {e}: the model zoo needs Debian's python3-torch, python3-numpy and "
        "python3-onnx (run scripts/install-deps.sh) and /usr/bin/python3"
    )

SEED = 20261128


# ---- convolutional networks ----


class ResBlock(nn.Module):
    """ResNet's basic block; one that changes the size or the channels has a
    1x1 convolution on the shortcut."""

    def __init__(self, cin, c, stride=1):
        super().__init__()
        self.c1, self.b1 = nn.Conv2d(cin, c, 3, stride, 1, bias=False), nn.BatchNorm2d(c)
        self.c2, self.b2 = nn.Conv2d(c, c, 3, 1, 1, bias=False), nn.BatchNorm2d(c)
        self.down = None
        if stride != 1 or cin != c:
            self.down = nn.Sequential(nn.Conv2d(cin, c, 1, stride, bias=False), nn.BatchNorm2d(c))

    def forward(self, x):
        y = self.b2(self.c2(F.relu(self.b1(self.c1(x)))))
        return F.relu(y + (x if self.down is None else self.down(x)))


class ResNet(nn.Module):
    """A ResNet-18 in miniature; its last stage is wider than 256 channels
    (more than 8 tiles across a pixel), as ResNet-18's 512 are."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(
            nn.Conv2d(3, 16, 7, 2, 3, bias=False), nn.BatchNorm2d(16), nn.ReLU(),
            nn.MaxPool2d(3, 2, 1),
        )
        self.layers = nn.Sequential(
            ResBlock(16, 16), ResBlock(16, 32, 2), ResBlock(32, 64, 2), ResBlock(64, 288, 2)
        )
        self.fc = nn.Linear(288, 10)

    def forward(self, x):
        x = self.layers(self.stem(x))
        return self.fc(F.adaptive_avg_pool2d(x, 1).flatten(1))


class InvertedResidual(nn.Module):
    """MobileNetV2's block: expand, depthwise, project (ReLU6 is a Clip)."""

    def __init__(self, cin, cout, stride, expand):
        super().__init__()
        h = cin * expand
        self.residual = stride == 1 and cin == cout
        self.m = nn.Sequential(
            nn.Conv2d(cin, h, 1, bias=False), nn.BatchNorm2d(h), nn.ReLU6(),
            nn.Conv2d(h, h, 3, stride, 1, groups=h, bias=False), nn.BatchNorm2d(h), nn.ReLU6(),
            nn.Conv2d(h, cout, 1, bias=False), nn.BatchNorm2d(cout),
        )

    def forward(self, x):
        return x + self.m(x) if self.residual else self.m(x)


class SqueezeExcite(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.a, self.b = nn.Conv2d(c, c // 4, 1), nn.Conv2d(c // 4, c, 1)

    def forward(self, x):
        s = F.adaptive_avg_pool2d(x, 1)
        return x * F.hardsigmoid(self.b(F.relu(self.a(s))))


class MobileNet(nn.Module):
    """MobileNetV2/V3 pieces: hardswish, inverted residuals, squeeze and
    excite, a mean over H and W, dropout (identity in inference)."""

    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 16, 3, 2, 1, bias=False), nn.BatchNorm2d(16), nn.Hardswish(),
            InvertedResidual(16, 16, 1, 1), InvertedResidual(16, 24, 2, 4),
            InvertedResidual(24, 24, 1, 3), SqueezeExcite(24), InvertedResidual(24, 40, 2, 3),
        )
        self.head = nn.Sequential(
            nn.Linear(40, 64), nn.Hardswish(), nn.Dropout(0.2), nn.Linear(64, 10)
        )

    def forward(self, x):
        return self.head(self.features(x).mean((2, 3)))


class UNet(nn.Module):
    """An encoder-decoder: max pooling down, a transposed convolution up, a
    skip connection by Concat, bilinear upsampling (Resize, or Upsample at
    opset 9)."""

    def __init__(self):
        super().__init__()
        self.d1 = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU())
        self.d2 = nn.Sequential(nn.Conv2d(8, 16, 3, padding=1), nn.ReLU())
        self.up = nn.ConvTranspose2d(16, 8, 2, 2)
        self.u1 = nn.Sequential(nn.Conv2d(16, 8, 3, padding=1), nn.LeakyReLU(0.1))
        self.out = nn.Conv2d(8, 2, 1)

    def forward(self, x):
        a = self.d1(x)
        b = self.d2(F.max_pool2d(a, 2))
        u = self.u1(torch.cat([self.up(b), a], 1))
        up = F.interpolate(b, scale_factor=2, mode="bilinear", align_corners=False)
        return torch.sigmoid(self.out(u)), up


class Vision(nn.Module):
    """Instance norm, SiLU, pixel shuffle, reflect padding, nearest
    downsampling, and integer results: ArgMax and TopK."""

    def __init__(self):
        super().__init__()
        self.c = nn.Conv2d(3, 12, 3, padding=1)
        self.norm = nn.InstanceNorm2d(12, affine=True)
        self.shuffle = nn.PixelShuffle(2)
        self.c2 = nn.Conv2d(3, 4, 3, padding=1, padding_mode="reflect")

    def forward(self, x):
        y = self.shuffle(F.silu(self.norm(self.c(x))))
        y = F.interpolate(self.c2(y), scale_factor=0.5, mode="nearest")
        flat = y.flatten(1)
        return y, flat.argmax(1), torch.topk(flat, 3).values


class Audio(nn.Module):
    """1-D convolutions with GLU, GroupNorm, reflect padding and dilation."""

    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv1d(4, 32, 5, padding=2)
        self.norm = nn.GroupNorm(4, 16)
        self.c2 = nn.Conv1d(16, 8, 3, dilation=2)

    def forward(self, x):
        y = self.norm(F.glu(self.c1(x), dim=1))
        return F.gelu(self.c2(F.pad(y, (2, 2), mode="reflect")))


class YoloHead(nn.Module):
    """A YOLOv5-style detection head's decoding (no NMS): sigmoid, a grid
    from meshgrid, anchors, a 5-D permute."""

    def __init__(self, anchors=3, classes=4):
        super().__init__()
        self.na, self.no = anchors, 5 + classes
        self.c = nn.Conv2d(8, anchors * self.no, 1)
        self.register_buffer("anchors", torch.tensor([[10.0, 13], [16, 30], [33, 23]]))

    def forward(self, f):
        b, _, h, w = f.shape
        p = self.c(f).view(b, self.na, self.no, h, w).permute(0, 1, 3, 4, 2).sigmoid()
        gy, gx = torch.meshgrid(torch.arange(h), torch.arange(w), indexing="ij")
        grid = torch.stack((gx, gy), 2).view(1, 1, h, w, 2).float()
        xy = (p[..., :2] * 2 - 0.5 + grid) * 8
        wh = (p[..., 2:4] * 2) ** 2 * self.anchors.view(1, self.na, 1, 1, 2)
        return torch.cat((xy, wh, p[..., 4:]), -1).view(b, -1, self.no)


# ---- recurrent networks ----


class LstmClassifier(nn.Module):
    """Embedding, a 2-layer bidirectional LSTM, the last step's features."""

    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(50, 16)
        self.lstm = nn.LSTM(16, 32, num_layers=2, batch_first=True, bidirectional=True)
        self.fc = nn.Linear(64, 4)

    def forward(self, tokens):
        y, (h, _) = self.lstm(self.embed(tokens))
        return self.fc(y[:, -1]), h


class LstmWithState(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(6, 10, batch_first=True)

    def forward(self, x, h0, c0):
        y, (h, c) = self.lstm(x, (h0, c0))
        return y, h, c


class GruTagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.gru = nn.GRU(8, 24, batch_first=True)
        self.fc = nn.Linear(24, 3)

    def forward(self, x):
        y, _ = self.gru(x)
        return torch.softmax(self.fc(y), -1)


# ---- attention ----


class Gpt(nn.Module):
    """A GPT-2-style decoder: pre-norm blocks, a causal mask (Trilu of a
    bool constant, then Where), tanh GELU, logits tied to the embedding."""

    def __init__(self, vocab=100, d=32, heads=4, layers=2, ctx=16):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Parameter(torch.randn(ctx, d) * 0.1)
        self.blocks = nn.ModuleList(
            nn.ModuleDict(
                dict(
                    ln1=nn.LayerNorm(d), qkv=nn.Linear(d, 3 * d), o=nn.Linear(d, d),
                    ln2=nn.LayerNorm(d), f1=nn.Linear(d, 4 * d), f2=nn.Linear(4 * d, d),
                )
            )
            for _ in range(layers)
        )
        self.lnf = nn.LayerNorm(d)
        self.heads = heads

    def forward(self, idx):
        b, t = idx.shape
        x = self.tok(idx) + self.pos[:t]
        mask = torch.tril(torch.ones(t, t, dtype=torch.bool))
        split = lambda v: v.view(b, t, self.heads, -1).transpose(1, 2)
        for blk in self.blocks:
            q, k, v = (split(v) for v in blk["qkv"](blk["ln1"](x)).split(x.shape[-1], -1))
            a = (q @ k.transpose(-1, -2)) / math.sqrt(q.shape[-1])
            a = a.masked_fill(~mask, float("-inf")).softmax(-1)
            x = x + blk["o"]((a @ v).transpose(1, 2).reshape(b, t, -1))
            x = x + blk["f2"](F.gelu(blk["f1"](blk["ln2"](x)), approximate="tanh"))
        return self.lnf(x) @ self.tok.weight.t()


class Bert(nn.Module):
    """A BERT encoder as Hugging Face writes it: word, position and token
    type embeddings, an additive attention mask made from an input, erf
    GELU, post-norm, a tanh pooler."""

    def __init__(self, vocab=120, d=32, heads=4, layers=2, ctx=12):
        super().__init__()
        self.words, self.positions = nn.Embedding(vocab, d), nn.Embedding(ctx, d)
        self.types, self.norm = nn.Embedding(2, d), nn.LayerNorm(d, eps=1e-12)
        self.layers = nn.ModuleList(
            nn.ModuleDict(
                dict(
                    q=nn.Linear(d, d), k=nn.Linear(d, d), v=nn.Linear(d, d), o=nn.Linear(d, d),
                    ln1=nn.LayerNorm(d, eps=1e-12), i=nn.Linear(d, 64), out=nn.Linear(64, d),
                    ln2=nn.LayerNorm(d, eps=1e-12),
                )
            )
            for _ in range(layers)
        )
        self.pool, self.heads = nn.Linear(d, d), heads

    def forward(self, ids, token_types, attention_mask):
        b, t = ids.shape
        pos = torch.arange(t).unsqueeze(0).expand(b, t)
        x = self.norm(self.words(ids) + self.positions(pos) + self.types(token_types))
        extra = (1.0 - attention_mask[:, None, None, :].to(x.dtype)) * torch.finfo(x.dtype).min
        split = lambda v: v.view(b, t, self.heads, -1).permute(0, 2, 1, 3)
        for l in self.layers:
            q, k, v = split(l["q"](x)), split(l["k"](x)), split(l["v"](x))
            a = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(q.shape[-1]) + extra
            ctx = torch.matmul(a.softmax(-1), v).permute(0, 2, 1, 3).reshape(b, t, -1)
            x = l["ln1"](x + l["o"](ctx))
            x = l["ln2"](x + l["out"](F.gelu(l["i"](x))))
        return x, torch.tanh(self.pool(x[:, 0]))


class VisionTransformer(nn.Module):
    """ViT: patches by a strided convolution, a class token (Expand and
    Concat), nn.TransformerEncoder with pre-norm layers."""

    def __init__(self, d=24, patch=8, patches=16):
        super().__init__()
        self.embed = nn.Conv2d(3, d, patch, patch)
        self.cls = nn.Parameter(torch.randn(1, 1, d))
        self.pos = nn.Parameter(torch.randn(1, patches + 1, d) * 0.1)
        layer = nn.TransformerEncoderLayer(
            d, 4, 48, 0.0, activation="gelu", batch_first=True, norm_first=True
        )
        self.encoder = nn.TransformerEncoder(layer, 2)
        self.head = nn.Linear(d, 5)

    def forward(self, x):
        p = self.embed(x).flatten(2).transpose(1, 2)
        p = torch.cat([self.cls.expand(x.shape[0], -1, -1), p], 1) + self.pos
        return self.head(self.encoder(p)[:, 0])


class Attention(nn.Module):
    """nn.MultiheadAttention with a key padding mask (bool input), its
    averaged weights as a second output, LayerNormalization (opset 17)."""

    def __init__(self):
        super().__init__()
        self.mha = nn.MultiheadAttention(16, 4, batch_first=True)
        self.norm = nn.LayerNorm(16)

    def forward(self, x, padding):
        y, w = self.mha(x, x, x, key_padding_mask=padding)
        return self.norm(x + y), w


class TensorOps(nn.Module):
    """Tensor code rather than layers: cumsum, einsum, indexing by a tensor,
    where, clamp, a max over a dim, a comparison cast to int64."""

    def forward(self, x, idx):
        return (
            torch.cumsum(x, 1),
            torch.einsum("bij,bjk->bik", x, x.transpose(1, 2)),
            x[:, idx],
            torch.where(x > 0, x, 0.1 * x).clamp(-0.5, 0.5),
            x.max(dim=2).values,
            (x.abs().sum(-1) > 1).to(torch.int64),
        )


class Seq2Seq(nn.Module):
    """nn.Transformer (encoder and decoder) with a causal target mask from
    generate_square_subsequent_mask (a float -inf mask)."""

    def __init__(self):
        super().__init__()
        self.t = nn.Transformer(16, 4, 1, 1, 32, 0.0, batch_first=True)

    def forward(self, src, tgt):
        mask = self.t.generate_square_subsequent_mask(tgt.shape[1])
        return self.t(src, tgt, tgt_mask=mask)


class VolumesAndPools(nn.Module):
    """Conv3d, ConvTranspose1d, adaptive and ceil-mode average pooling,
    padded 1-D max pooling, a max over two dims."""

    def __init__(self):
        super().__init__()
        self.c = nn.Conv3d(2, 4, 3, padding=1)
        self.t = nn.ConvTranspose1d(4, 3, 4, 2, 1)
        self.p = nn.AdaptiveAvgPool2d((2, 3))

    def forward(self, v, a, im):
        return (
            F.relu(self.c(v)).amax((2, 3)),
            torch.tanh(self.t(a)),
            self.p(im),
            F.avg_pool2d(im, 2, ceil_mode=True),
            F.max_pool1d(a, 3, 2, 1),
        )


class MaskedMean(nn.Module):
    """Mean of the embeddings of the non-padding tokens (a mask from the
    input, a clamped count)."""

    def __init__(self):
        super().__init__()
        self.e = nn.Embedding(20, 8, padding_idx=0)
        self.fc = nn.Linear(8, 3)

    def forward(self, tokens):
        m = (tokens != 0).unsqueeze(-1).float()
        return self.fc((self.e(tokens) * m).sum(1) / m.sum(1).clamp(min=1))


class TensorOps2(nn.Module):
    """More tensor code: logsumexp, normalize, cdist, std, one_hot, sort,
    flip, roll, softplus and mish, nan_to_num of a log, round, remainder."""

    def forward(self, x, y):
        return (
            torch.logsumexp(x, -1),
            F.normalize(x, dim=-1),
            torch.cdist(x, y),
            x.std(-1),
            F.one_hot(x.argmax(-1), 6).float(),
            torch.sort(x, -1, descending=True)[0],
            torch.flip(x, [1]),
            torch.roll(x, 2, 1),
            F.softplus(x) * F.mish(x),
            torch.nan_to_num(torch.log(x)),
            (x * 3).round() / 3,
            torch.remainder(x, 0.7),
        )


class FakeQuantized(nn.Module):
    """Quantization-aware training's export: QuantizeLinear and
    DequantizeLinear pairs on activations (uint8, per tensor) and on the
    convolution's weights (int8, per output channel)."""

    def __init__(self):
        super().__init__()
        self.c = nn.Conv2d(3, 8, 3, padding=1)
        self.fc = nn.Linear(8 * 8 * 8, 5)

    def forward(self, x):
        x = torch.fake_quantize_per_tensor_affine(x, 0.02, 3, 0, 255)
        zero = torch.zeros(8, dtype=torch.int32)
        w = torch.fake_quantize_per_channel_affine(
            self.c.weight, torch.full((8,), 0.01), zero, 0, -128, 127
        )
        y = F.relu(F.conv2d(x, w, self.c.bias, padding=1))
        y = torch.fake_quantize_per_tensor_affine(y, 0.05, 0, 0, 255)
        return self.fc(F.max_pool2d(y, 2).flatten(1))


class NewtonWhile(nn.Module):
    """A scripted while loop whose condition depends on the data (Newton's
    square root to a tolerance given at run time, at most 30 steps)."""

    def forward(self, x, tol):
        y = x
        steps = torch.zeros(1)
        i = 0
        while i < 30 and bool((y * y - x).abs().max() > tol):
            y = 0.5 * (y + x / y)
            steps = steps + 1
            i += 1
        return y, steps


class NewtonBreak(nn.Module):
    """The same as a for loop with a break."""

    def forward(self, x, tol):
        y = x
        steps = torch.zeros(1)
        for _ in range(30):
            if bool((y * y - x).abs().max() <= tol):
                break
            y = 0.5 * (y + x / y)
            steps = steps + 1
        return y, steps


def scripted(cls):
    return lambda: torch.jit.script(cls())


class ConvNeXtBlock(nn.Module):
    """ConvNeXt: a patchify stem, a 7x7 depthwise convolution, LayerNorm in
    channels-last order (permutes), an inverted MLP, a layer scale."""

    def __init__(self, c=16):
        super().__init__()
        self.stem = nn.Conv2d(3, c, 4, 4)
        self.dw = nn.Conv2d(c, c, 7, padding=3, groups=c)
        self.norm = nn.LayerNorm(c)
        self.up, self.down = nn.Linear(c, 4 * c), nn.Linear(4 * c, c)
        self.scale = nn.Parameter(torch.full((c,), 0.5))

    def forward(self, x):
        x = self.stem(x)
        y = self.dw(x).permute(0, 2, 3, 1)
        y = self.down(F.gelu(self.up(self.norm(y)))) * self.scale
        return (x + y.permute(0, 3, 1, 2)).mean((2, 3))


class DenseBlock(nn.Module):
    """DenseNet: each layer's output concatenated onto its input."""

    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList(
            nn.Sequential(
                nn.BatchNorm2d(4 + 4 * i), nn.ReLU(), nn.Conv2d(4 + 4 * i, 4, 3, padding=1)
            )
            for i in range(3)
        )

    def forward(self, x):
        for layer in self.layers:
            x = torch.cat([x, layer(x)], 1)
        return F.avg_pool2d(x, 2)


class MBConv(nn.Module):
    """EfficientNet's block: SiLU, a 5x5 depthwise convolution of stride 2,
    squeeze-and-excite with a sigmoid gate."""

    def __init__(self):
        super().__init__()
        self.expand, self.dw = nn.Conv2d(8, 32, 1), nn.Conv2d(32, 32, 5, 2, 2, groups=32)
        self.se1, self.se2 = nn.Conv2d(32, 8, 1), nn.Conv2d(8, 32, 1)
        self.project = nn.Conv2d(32, 16, 1)

    def forward(self, x):
        y = F.silu(self.dw(F.silu(self.expand(x))))
        gate = torch.sigmoid(self.se2(F.silu(self.se1(y.mean((2, 3), keepdim=True)))))
        return self.project(y * gate)


class ShiftedWindows(nn.Module):
    """Swin's shifted-window attention: roll, windows by view and 6-D
    permute, attention within each window, back and roll again."""

    def __init__(self, c=8, w=4):
        super().__init__()
        self.qkv, self.o, self.w = nn.Linear(c, 3 * c), nn.Linear(c, c), w

    def forward(self, x):
        b, h, wd, c = x.shape
        w = self.w
        x = torch.roll(x, (-2, -2), (1, 2))
        win = x.view(b, h // w, w, wd // w, w, c).permute(0, 1, 3, 2, 4, 5).reshape(-1, w * w, c)
        q, k, v = self.qkv(win).chunk(3, -1)
        a = (q @ k.transpose(-2, -1) / c**0.5).softmax(-1) @ v
        y = self.o(a).view(b, h // w, wd // w, w, w, c).permute(0, 1, 3, 2, 4, 5)
        return torch.roll(y.reshape(b, h, wd, c), (2, 2), (1, 2))


class WaveNet(nn.Module):
    """Causal dilated 1-D convolutions (left padding) with tanh-sigmoid
    gates and residual adds."""

    def __init__(self):
        super().__init__()
        self.convs = nn.ModuleList(nn.Conv1d(8, 16, 2, dilation=d) for d in (1, 2, 4))

    def forward(self, x):
        for i, conv in enumerate(self.convs):
            a, b = conv(F.pad(x, (2**i, 0))).chunk(2, 1)
            x = x + torch.tanh(a) * torch.sigmoid(b)
        return x


class TextPool(nn.Module):
    """CLIP's text pooling: the features at each sequence's largest token id
    (indexing by an ArgMax), projected and normalized."""

    def __init__(self):
        super().__init__()
        self.embed, self.proj = nn.Embedding(30, 12), nn.Linear(12, 6)

    def forward(self, ids):
        x = self.embed(ids)
        x = x[torch.arange(x.shape[0]), ids.argmax(-1)]
        return F.normalize(self.proj(x), dim=-1)


class DiffusionResBlock(nn.Module):
    """A diffusion U-Net's residual block: GroupNorm and SiLU around two
    convolutions, the timestep embedding added per channel."""

    def __init__(self, c, tdim):
        super().__init__()
        self.n1, self.c1 = nn.GroupNorm(4, c), nn.Conv2d(c, c, 3, padding=1)
        self.t = nn.Linear(tdim, c)
        self.n2, self.c2 = nn.GroupNorm(4, c), nn.Conv2d(c, c, 3, padding=1)

    def forward(self, x, te):
        h = self.c1(F.silu(self.n1(x))) + self.t(te)[:, :, None, None]
        return x + self.c2(F.silu(self.n2(h)))


class Diffusion(nn.Module):
    """A denoising U-Net: sinusoidal embedding of an integer timestep (an
    input), residual blocks, a strided down-sampling, self-attention over
    the pixels (1x1 convolutions), nearest up-sampling and a skip."""

    def __init__(self):
        super().__init__()
        self.temb = nn.Sequential(nn.Linear(16, 32), nn.SiLU(), nn.Linear(32, 32))
        self.inp, self.r1 = nn.Conv2d(3, 16, 3, padding=1), DiffusionResBlock(16, 32)
        self.down, self.r2 = nn.Conv2d(16, 32, 3, 2, 1), DiffusionResBlock(32, 32)
        self.norm, self.qkv, self.o = nn.GroupNorm(4, 32), nn.Conv2d(32, 96, 1), nn.Conv2d(32, 32, 1)
        self.up, self.r3 = nn.Conv2d(32, 16, 3, padding=1), DiffusionResBlock(16, 32)
        self.out = nn.Conv2d(16, 3, 3, padding=1)

    def forward(self, x, t):
        freqs = torch.exp(-math.log(10000.0) * torch.arange(8, dtype=torch.float32) / 8)
        angles = t[:, None].float() * freqs[None]
        te = self.temb(torch.cat([torch.sin(angles), torch.cos(angles)], -1))
        skip = self.r1(self.inp(x), te)
        h = self.r2(self.down(skip), te)
        b, c, hh, ww = h.shape
        q, k, v = self.qkv(self.norm(h)).reshape(b, 3, c, hh * ww).unbind(1)
        a = torch.softmax(q.transpose(1, 2) @ k / math.sqrt(c), -1)
        h = h + self.o((v @ a.transpose(1, 2)).reshape(b, c, hh, ww))
        h = F.interpolate(h, scale_factor=2.0, mode="nearest")
        return self.out(F.silu(self.r3(self.up(h) + skip, te)))


class GraphMessages(nn.Module):
    """A message-passing graph network: messages along edges given at run
    time, summed into each edge's target with scatter_add (several edges
    into one node), divided by the in-degree, and a max readout."""

    def __init__(self, d=16):
        super().__init__()
        self.msg, self.upd, self.readout = nn.Linear(d, d), nn.Linear(2 * d, d), nn.Linear(d, 4)

    def forward(self, x, src, dst):
        m = F.relu(self.msg(x[src]))
        agg = torch.zeros_like(x).scatter_add(0, dst[:, None].expand(-1, x.shape[1]), m)
        ones = torch.ones(dst.shape[0], 1)
        deg = torch.zeros(x.shape[0], 1).scatter_add(0, dst[:, None], ones).clamp(min=1)
        h = F.relu(self.upd(torch.cat([x, agg / deg], 1)))
        return self.readout(h).amax(0)


class CroppedSkip(nn.Module):
    """A 3-D U-Net's skip connection without padding: the encoder's volume
    cropped to the decoder's size by F.pad with negative padding, which
    exports a Pad with negative pads, then concatenated; and a pad that
    crops one dim while it pads another."""

    def __init__(self):
        super().__init__()
        self.enc, self.dec = nn.Conv3d(1, 4, 3, padding=1), nn.Conv3d(4, 4, 3)

    def forward(self, v):
        e = F.relu(self.enc(v))
        crop = F.pad(e, (-1, -1, -1, -1, -1, -1))
        return torch.cat([crop, F.relu(self.dec(e))], 1), F.pad(v, (2, -1, -1, 0), value=0.25)


class MixtureOfExperts(nn.Module):
    """A top-2 mixture of experts: a router's TopK, a softmax over the two
    scores, each token's experts' weights gathered by index and applied with
    Einsum."""

    def __init__(self, d=16, experts=4, hidden=32):
        super().__init__()
        self.router = nn.Linear(d, experts)
        self.w1 = nn.Parameter(torch.randn(experts, d, hidden) * 0.2)
        self.w2 = nn.Parameter(torch.randn(experts, hidden, d) * 0.2)

    def forward(self, x):
        score, idx = torch.topk(self.router(x), 2, -1)
        h = F.gelu(torch.einsum("td,tkdh->tkh", x, self.w1[idx]))
        y = torch.einsum("tkh,tkhd->tkd", h, self.w2[idx])
        return (torch.softmax(score, -1)[..., None] * y).sum(1)


class RMSNorm(nn.Module):
    def __init__(self, d, eps=1e-5):
        super().__init__()
        self.w, self.eps = nn.Parameter(torch.rand(d) + 0.5), eps

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.w


def rotate(x, cos, sin):
    """Rotary position embedding, the half-split form."""
    h = x.shape[-1] // 2
    return x * cos + torch.cat([-x[..., h:], x[..., :h]], -1) * sin


class Llama(nn.Module):
    """A LLaMA-style decoder step with a key/value cache: RMSNorm, rotary
    positions looked up by the position ids given, grouped-query attention
    (two query heads a key/value head), SwiGLU. The
    cache grows: the past keys and values come in, the present ones (one
    token longer per token given) go out."""

    def __init__(self, vocab=64, d=32, heads=4, kv_heads=2, layers=2, ffn=48, ctx=32):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.h, self.kvh, self.hd = heads, kv_heads, d // heads
        kv = kv_heads * self.hd
        self.blocks = nn.ModuleList(
            nn.ModuleDict(
                dict(
                    n1=RMSNorm(d), q=nn.Linear(d, d, bias=False), k=nn.Linear(d, kv, bias=False),
                    v=nn.Linear(d, kv, bias=False), o=nn.Linear(d, d, bias=False),
                    n2=RMSNorm(d), g=nn.Linear(d, ffn, bias=False),
                    u=nn.Linear(d, ffn, bias=False), dn=nn.Linear(ffn, d, bias=False),
                )
            )
            for _ in range(layers)
        )
        self.norm, self.head = RMSNorm(d), nn.Linear(d, vocab, bias=False)
        inv = 1.0 / 10000 ** (torch.arange(0, self.hd, 2).float() / self.hd)
        f = torch.outer(torch.arange(ctx).float(), inv).repeat(1, 2)
        self.register_buffer("cos", f.cos())
        self.register_buffer("sin", f.sin())

    def repeat_kv(self, x):
        """Each key/value head for its query heads, as Hugging Face's
        LLaMA does it (expand and reshape). PyTorch 1.13 exports
        repeat_interleave with a Reshape whose 0 copies the wrong dim when
        it does not know the sequence length, a graph that no ONNX runtime
        can run."""
        b, h, s, d = x.shape
        rep = self.h // self.kvh
        return x[:, :, None].expand(b, h, rep, s, d).reshape(b, h * rep, s, d)

    def block(self, blk, x, cos, sin, mask, cache):
        """One layer; cache(k, v) gives the keys and values attended to."""
        b, t, _ = x.shape
        y = blk["n1"](x)
        q = blk["q"](y).view(b, t, self.h, self.hd).transpose(1, 2)
        k = blk["k"](y).view(b, t, self.kvh, self.hd).transpose(1, 2)
        v = blk["v"](y).view(b, t, self.kvh, self.hd).transpose(1, 2)
        k, v = cache(rotate(k, cos, sin), v)
        kk, vv = self.repeat_kv(k), self.repeat_kv(v)
        a = (rotate(q, cos, sin) @ kk.transpose(-1, -2)) / math.sqrt(self.hd)
        a = a.masked_fill(~mask, float("-inf")).softmax(-1)
        x = x + blk["o"]((a @ vv).transpose(1, 2).reshape(b, t, -1))
        y = blk["n2"](x)
        return x + blk["dn"](F.silu(blk["g"](y)) * blk["u"](y)), k, v

    def forward(self, ids, pos, past_k, past_v):
        t, p = ids.shape[1], past_k.shape[3]
        x = self.emb(ids)
        cos, sin = self.cos[pos][:, None], self.sin[pos][:, None]
        mask = torch.ones(t, p + t, dtype=torch.bool).tril(p)
        ks, vs = [], []
        for i, blk in enumerate(self.blocks):
            grow = lambda k, v, i=i: (torch.cat([past_k[i], k], 2), torch.cat([past_v[i], v], 2))
            x, k, v = self.block(blk, x, cos, sin, mask, grow)
            ks.append(k)
            vs.append(v)
        return self.head(self.norm(x)), torch.stack(ks), torch.stack(vs)


class LlamaStatic(Llama):
    """The same decoder with a cache of fixed size, as a compiled model that
    runs step after step needs it: each token's keys and values are
    scattered into the cache at its position, and attention is masked to
    the positions up to it. One binary then serves every step
    (examples/onnx_generate)."""

    def forward(self, ids, pos, cache_k, cache_v):
        b, t = ids.shape
        x = self.emb(ids)
        cos, sin = self.cos[pos][:, None], self.sin[pos][:, None]
        mask = (torch.arange(cache_k.shape[3])[None, None, :] <= pos[:, :, None])[:, None]
        at = pos[:, None, :, None].expand(b, self.kvh, t, self.hd)
        ks, vs = [], []
        for i, blk in enumerate(self.blocks):
            put = lambda k, v, i=i: (cache_k[i].scatter(2, at, k), cache_v[i].scatter(2, at, v))
            x, k, v = self.block(blk, x, cos, sin, mask, put)
            ks.append(k)
            vs.append(v)
        return self.head(self.norm(x)), torch.stack(ks), torch.stack(vs)


class CacheWrites(nn.Module):
    """A key/value cache of fixed size written at the positions of the
    tokens given, the two ways PyTorch code does it: index_copy (as Hugging
    Face's StaticCache does; exported as ScatterElements after a
    ScatterElements on the shape) and indexed assignment (ScatterND)."""

    def forward(self, k_cache, v_cache, pos, k, v):
        v_cache = v_cache.clone()
        v_cache[:, :, pos] = v
        return k_cache.index_copy(2, pos, k), v_cache


# ---- detectors (torchvision) ----


class TinyBackbone(nn.Module):
    """Three strided convolutions, their outputs the feature maps a
    detector's head reads (strides 2, 4 and 8)."""

    def __init__(self, ch=16):
        super().__init__()
        self.out_channels = ch
        self.stem = nn.Sequential(nn.Conv2d(3, ch, 3, 2, 1), nn.BatchNorm2d(ch), nn.ReLU())
        self.down1 = nn.Sequential(nn.Conv2d(ch, ch, 3, 2, 1), nn.ReLU())
        self.down2 = nn.Sequential(nn.Conv2d(ch, ch, 3, 2, 1), nn.ReLU())

    def forward(self, x):
        a = self.stem(x)
        b = self.down1(a)
        return collections.OrderedDict([("0", a), ("1", b), ("2", self.down2(b))])


DETECTIONS = 20


class Detector(nn.Module):
    """A torchvision detector on one image, its detections as a tuple:
    torchvision's own post-processing (scores above a threshold per level
    or class, top-k, batched NMS, the best DETECTIONS), which compiles with
    --pad-dynamic into outputs of DETECTIONS rows, the unused ones padding
    (padded_outputs)."""

    padded_outputs = DETECTIONS

    def __init__(self, kind):
        super().__init__()
        try:
            from torchvision.models.detection import FasterRCNN, RetinaNet
            from torchvision.models.detection.anchor_utils import (AnchorGenerator,
                                                                   DefaultBoxGenerator)
            from torchvision.models.detection.ssd import SSD
            from torchvision.ops import MultiScaleRoIAlign
        except ImportError as e:
            sys.exit(f"make_onnx_zoo: {e}: the detectors need Debian's python3-torchvision "
                     "(run scripts/install-deps.sh)")
        backbone = TinyBackbone()
        if kind == "retinanet":
            anchors = AnchorGenerator(((12,), (24,), (48,)), ((0.5, 1.0, 2.0),) * 3)
            self.net = RetinaNet(backbone, num_classes=5, min_size=64, max_size=64,
                                 anchor_generator=anchors, score_thresh=0.5,
                                 detections_per_img=DETECTIONS, topk_candidates=40)
            scale = 0.1
        elif kind == "faster_rcnn":
            # 200 proposals x 60 classes: 12,000 boxes into the box head's
            # NMS, more than a table of overlaps takes, of which the model
            # reads the first DETECTIONS (keep[:detections_per_img]).
            anchors = AnchorGenerator(((12,), (24,), (48,)), ((0.5, 1.0, 2.0),) * 3)
            self.net = FasterRCNN(backbone, num_classes=61, min_size=64, max_size=64,
                                  rpn_anchor_generator=anchors,
                                  box_roi_pool=MultiScaleRoIAlign(["0", "1", "2"], 7, 2),
                                  rpn_pre_nms_top_n_test=300, rpn_post_nms_top_n_test=200,
                                  box_detections_per_img=DETECTIONS, representation_size=64)
            scale = 0.05
        else:
            backbone.out_channels = [backbone.out_channels] * 3
            self.net = SSD(backbone, DefaultBoxGenerator([[2], [2], [2]]), (64, 64),
                           num_classes=4, score_thresh=0.85, topk_candidates=40,
                           detections_per_img=DETECTIONS)
            scale = 0.05
        # Random weights give scores all alike (RetinaNet's prior of 0.01);
        # moved apart, the detections are a real selection.
        with torch.no_grad():
            for p in self.net.parameters():
                p.add_(torch.randn_like(p) * scale)
            if kind == "retinanet":
                self.net.head.classification_head.cls_logits.bias.zero_()
            if kind == "faster_rcnn":  # features and class scores spread out
                head = self.net.roi_heads.box_head
                for fc in (head.fc6, head.fc7):
                    fc.weight.normal_(0, fc.weight.shape[1] ** -0.5)
                cls = self.net.roi_heads.box_predictor.cls_score
                cls.weight.normal_(0, 0.3)
                cls.bias.normal_(0, 1.0)

    def forward(self, x):
        d = self.net([x])[0]
        if not torch.onnx.is_in_onnx_export():
            s = torch.sort(d["scores"]).values
            # float32 rounding could swap two detections closer than this
            if len(s) > 1 and (s[1:] - s[:-1]).min() < 1e-5:
                raise SystemExit("make_onnx_zoo: detector reference too close to call")
        return d["boxes"], d["scores"], d["labels"]


# ---- the cases ----


def randn(*shape):
    return torch.randn(*shape)


def tokens(high, *shape):
    return torch.randint(0, high, shape)


# name: (module, opset, inputs as (name, tensor), output names)
def cases():
    lengths = torch.tensor([[False] * 6, [False] * 4 + [True] * 2])
    mask = torch.tensor([[1] * 12, [1] * 8 + [0] * 4])
    resnet_in = [("x", randn(2, 3, 64, 64))]
    unet_in = [("x", randn(1, 1, 32, 32))]
    return {
        "resnet_opset9": (ResNet, 9, resnet_in, ["y"]),
        "resnet_opset14": (ResNet, 14, resnet_in, ["y"]),
        "mobilenet": (MobileNet, 13, [("x", randn(2, 3, 64, 64))], ["y"]),
        "unet_opset11": (UNet, 11, unet_in, ["mask", "up"]),
        "unet_opset14": (UNet, 14, unet_in, ["mask", "up"]),
        "vision_ops": (Vision, 13, [("x", randn(2, 3, 16, 16))], ["y", "argmax", "top3"]),
        "audio_conv1d": (Audio, 17, [("x", randn(2, 4, 40))], ["y"]),
        "yolo_head": (YoloHead, 14, [("features", randn(1, 8, 6, 5))], ["detections"]),
        "lstm_classifier": (LstmClassifier, 11, [("tokens", tokens(50, 3, 7))], ["logits", "h"]),
        "lstm_with_state": (
            LstmWithState, 14,
            [("x", randn(3, 4, 6)), ("h0", randn(1, 3, 10)), ("c0", randn(1, 3, 10))],
            ["y", "h", "c"],
        ),
        "gru_tagger": (GruTagger, 14, [("x", randn(2, 5, 8))], ["probs"]),
        "gpt": (Gpt, 14, [("idx", tokens(100, 2, 16))], ["logits"]),
        "bert": (
            Bert, 14,
            [
                ("ids", tokens(120, 2, 12)),
                ("token_types", tokens(2, 2, 12)),
                ("attention_mask", mask),
            ],
            ["hidden", "pooled"],
        ),
        "vit": (VisionTransformer, 14, [("x", randn(2, 3, 32, 32))], ["logits"]),
        "attention_opset17": (
            Attention, 17, [("x", randn(2, 6, 16)), ("padding", lengths)], ["y", "weights"]
        ),
        "seq2seq_transformer": (
            Seq2Seq, 16, [("src", randn(2, 5, 16)), ("tgt", randn(2, 4, 16))], ["y"]
        ),
        "volumes_and_pools": (
            VolumesAndPools, 16,
            [("v", randn(1, 2, 4, 5, 6)), ("a", randn(2, 4, 9)), ("im", randn(1, 3, 6, 9))],
            ["conv3d", "convtranspose1d", "adaptive_avg", "avg_ceil", "max1d"],
        ),
        "masked_mean": (
            MaskedMean, 14, [("tokens", torch.tensor([[3, 5, 0, 0], [7, 1, 2, 0]]))], ["y"]
        ),
        "tensor_ops2": (
            TensorOps2, 16, [("x", randn(2, 4, 6)), ("y", randn(2, 3, 6))],
            ["lse", "normalized", "cdist", "std", "one_hot", "sorted", "flipped", "rolled",
             "softplus_mish", "log", "rounded", "remainder"],
        ),
        "qat_qdq": (FakeQuantized, 13, [("x", randn(2, 3, 16, 16))], ["y"]),
        "newton_while": (
            scripted(NewtonWhile), 13,
            [("x", torch.tensor([2.0, 9.0, 100.0, 0.25])), ("tol", torch.tensor(1e-3))],
            ["y", "steps"],
        ),
        "newton_for_break": (
            scripted(NewtonBreak), 13,
            [("x", torch.tensor([3.0, 0.5, 42.0])), ("tol", torch.tensor(0.1))],
            ["y", "steps"],
        ),
        "convnext_block": (ConvNeXtBlock, 14, [("x", randn(2, 3, 32, 32))], ["y"]),
        "dense_block": (DenseBlock, 14, [("x", randn(1, 4, 8, 8))], ["y"]),
        "mbconv": (MBConv, 14, [("x", randn(1, 8, 16, 16))], ["y"]),
        "shifted_windows": (ShiftedWindows, 14, [("x", randn(2, 8, 8, 8))], ["y"]),
        "wavenet": (WaveNet, 14, [("x", randn(2, 8, 20))], ["y"]),
        "text_pool": (TextPool, 14, [("ids", tokens(30, 3, 7))], ["y"]),
        "diffusion_unet": (
            Diffusion, 17, [("x", randn(2, 3, 16, 16)), ("t", torch.tensor([3, 500]))], ["eps"]
        ),
        "graph_messages": (
            GraphMessages, 16,
            [("x", randn(10, 16)), ("src", tokens(10, 30)), ("dst", tokens(10, 30))], ["y"],
        ),
        "cropped_skip": (CroppedSkip, 17, [("v", randn(1, 1, 6, 7, 8))], ["y", "padded"]),
        "mixture_of_experts": (MixtureOfExperts, 17, [("x", randn(12, 16))], ["y"]),
        "tensor_ops": (
            TensorOps, 14, [("x", randn(2, 5, 4)), ("idx", torch.tensor([4, 0, 2]))],
            ["cumsum", "einsum", "gathered", "where", "max", "count"],
        ),
        "llama_kv_cache": (
            Llama, 17,
            [("ids", tokens(64, 2, 3)), ("pos", torch.tensor([[5, 6, 7], [5, 6, 7]])),
             ("past_k", randn(2, 2, 2, 5, 8)), ("past_v", randn(2, 2, 2, 5, 8))],
            ["logits", "present_k", "present_v"],
        ),
        "llama_static_cache": (
            LlamaStatic, 17,
            [("ids", tokens(64, 2, 1)), ("pos", torch.tensor([[5], [9]])),
             ("cache_k", randn(2, 2, 2, 16, 8)), ("cache_v", randn(2, 2, 2, 16, 8))],
            ["logits", "cache_k_out", "cache_v_out"],
        ),
        "cache_writes": (
            CacheWrites, 17,
            [("k_cache", randn(2, 4, 64, 16)), ("v_cache", randn(2, 4, 64, 16)),
             ("pos", torch.tensor([7, 30, 31])), ("k", randn(2, 4, 3, 16)),
             ("v", randn(2, 4, 3, 16))],
            ["k_out", "v_out"],
        ),
        "padded_retinanet": (
            lambda: Detector("retinanet"), 13, [("x", torch.rand(3, 64, 64))],
            ["boxes", "scores", "labels"],
        ),
        "padded_ssd": (
            lambda: Detector("ssd"), 13, [("x", torch.rand(3, 64, 64))],
            ["boxes", "scores", "labels"],
        ),
        "padded_faster_rcnn": (
            lambda: Detector("faster_rcnn"), 13, [("x", torch.rand(3, 64, 64))],
            ["boxes", "scores", "labels"],
        ),
    }


def perturb_norms(model):
    """Moves BatchNorm statistics and norm parameters off their defaults."""
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.running_mean.uniform_(-0.5, 0.5)
            m.running_var.uniform_(0.5, 1.5)
        if isinstance(m, (nn.BatchNorm2d, nn.LayerNorm, nn.GroupNorm, nn.InstanceNorm2d)):
            if m.weight is not None:
                m.weight.data.uniform_(0.5, 1.5)
                m.bias.data.uniform_(-0.2, 0.2)


def write_pb(path, name, array):
    with open(path, "wb") as f:
        f.write(numpy_helper.from_array(np.array(array, order="C"), name).SerializeToString())


GENERATE_PROMPTS = [[3, 17, 5, 9], [40, 2, 33, 11]]
GENERATE_TOKENS = 8


def write_generation(path, model, cache):
    """Greedy generation with a fixed-cache decoder step (LlamaStatic), one
    token a step, the cache fed back: the reference of examples/onnx_generate.
    `cache` has the cache's shape; the cache starts as zeros. Writes the
    prompts and each row's generated tokens. Refuses a reference whose
    choice between the two best tokens is closer than 1e-3 at any step,
    which float32 summation order could flip."""
    ck, cv = torch.zeros_like(cache), torch.zeros_like(cache)
    prompts = torch.tensor(GENERATE_PROMPTS)
    n = prompts.shape[1]
    out, ids = [], prompts[:, :1]
    with torch.no_grad():
        for step in range(n + GENERATE_TOKENS - 1):
            pos = torch.full((prompts.shape[0], 1), step)
            logits, ck, cv = model(ids, pos, ck, cv)
            if step + 1 < n:
                ids = prompts[:, step + 1:step + 2]
                continue
            top = logits[:, 0].topk(2, -1)
            if (top.values[:, 0] - top.values[:, 1]).min() < 1e-3:
                raise SystemExit("make_onnx_zoo: generation reference too close to call")
            ids = top.indices[:, :1]
            out.append(ids[:, 0])
    tokens = torch.stack(out, 1).tolist()
    with open(path, "w") as f:
        for p in GENERATE_PROMPTS:
            f.write("prompt " + ",".join(map(str, p)) + "\n")
        for r, row in enumerate(tokens):
            f.write(f"tokens {r}: " + " ".join(map(str, row)) + "\n")


def write_case(out, name, make, opset, inputs, output_names):
    """Exports one case into a temporary directory, then renames it into
    place, so an interrupted run leaves no half-written case."""
    torch.manual_seed(SEED)
    model = make()
    perturb_norms(model)
    model.eval()
    args = tuple(t for _, t in inputs)
    with torch.no_grad():
        outputs = model(*args)
    if not isinstance(outputs, tuple):
        outputs = (outputs,)
    tmp = os.path.join(out, f".{name}.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(os.path.join(tmp, "test_data_set_0"))
    path = os.path.join(tmp, "model.onnx")
    torch.onnx.export(
        model, args, path, input_names=[n for n, _ in inputs], output_names=output_names,
        opset_version=opset, do_constant_folding=True,
    )
    onnx.checker.check_model(onnx.load(path), full_check=True)
    data = os.path.join(tmp, "test_data_set_0")
    for i, (n, t) in enumerate(inputs):
        write_pb(os.path.join(data, f"input_{i}.pb"), n, t.numpy())
    for i, (n, t) in enumerate(zip(output_names, outputs)):
        t = t.numpy()
        rows = getattr(model, "padded_outputs", 0)
        if rows:  # the binary's padding: NaN for floats, -1 for integers
            pad = np.full((rows,) + t.shape[1:], np.nan if t.dtype.kind == "f" else -1, t.dtype)
            pad[: len(t)] = t
            t = pad
        write_pb(os.path.join(data, f"output_{i}.pb"), n, t)
    if isinstance(model, LlamaStatic):
        write_generation(os.path.join(tmp, "generate.txt"), model, dict(inputs)["cache_k"])
    final = os.path.join(out, name)
    shutil.rmtree(final, ignore_errors=True)
    os.rename(tmp, final)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True, help="directory to write the cases to")
    ap.add_argument("--threads", type=int, default=2, help="PyTorch threads (default 2)")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    # The exporter's notes (batch sizes, opset 9's Upsample) are about
    # PyTorch's own export choices, not about these fixed cases.
    warnings.filterwarnings("ignore")
    os.makedirs(args.out, exist_ok=True)
    manifest = os.path.join(args.out, "MANIFEST.txt")
    if os.path.exists(manifest):
        os.remove(manifest)
    torch.manual_seed(SEED)
    table = cases()
    for name, (make, opset, inputs, outputs) in table.items():
        write_case(args.out, name, make, opset, inputs, outputs)
    with open(manifest + ".tmp", "w") as f:
        f.write("".join(n + "\n" for n in table))
    os.rename(manifest + ".tmp", manifest)
    print(f"make_onnx_zoo: {len(table)} cases in {args.out}")


if __name__ == "__main__":
    main()
