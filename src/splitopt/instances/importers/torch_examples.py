"""Two small PyTorch models for the command-line tour and the notebook (``splitopt import torch
splitopt.instances.importers.torch_examples:residual_cnn --input 8x3x32x32``). Random weights,
seeded: nothing is downloaded. The end-to-end test writes its own models."""

from __future__ import annotations

import torch
from torch import nn


class BasicBlock(nn.Module):
    """A residual block (He et al. 2016): conv-bn-relu-conv-bn, plus the input (1x1 conv when the
    width or stride changes), then relu."""

    def __init__(self, c_in: int, c_out: int, stride: int = 1):
        super().__init__()
        self.conv1 = nn.Conv2d(c_in, c_out, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(c_out)
        self.conv2 = nn.Conv2d(c_out, c_out, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(c_out)
        self.act1 = nn.ReLU()
        self.act2 = nn.ReLU()
        self.down = (nn.Sequential(nn.Conv2d(c_in, c_out, 1, stride, bias=False), nn.BatchNorm2d(c_out))
                     if stride != 1 or c_in != c_out else nn.Identity())

    def forward(self, x):
        y = self.act1(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return self.act2(y + self.down(x))


class ResidualCNN(nn.Module):
    """Stem, ``len(widths)`` stages of two residual blocks, pooling and a linear classifier."""

    def __init__(self, widths=(16, 32, 64), classes: int = 10):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, widths[0], 3, 1, 1, bias=False), nn.BatchNorm2d(widths[0]), nn.ReLU())
        blocks, c = [], widths[0]
        for i, w in enumerate(widths):
            blocks += [BasicBlock(c, w, 1 if i == 0 else 2), BasicBlock(w, w)]
            c = w
        self.blocks = nn.Sequential(*blocks)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(c, classes)

    def forward(self, x):
        x = self.pool(self.blocks(self.stem(x)))
        return self.fc(torch.flatten(x, 1))


class Block(nn.Module):
    """A pre-norm transformer block: x + attn(ln(x)), then x + mlp(ln(x))."""

    def __init__(self, d: int, heads: int):
        super().__init__()
        self.ln1 = nn.LayerNorm(d)
        self.attn = nn.MultiheadAttention(d, heads, batch_first=True)
        self.ln2 = nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x):
        h = self.ln1(x)
        x = x + self.attn(h, h, h, need_weights=False)[0]
        return x + self.mlp(self.ln2(x))


class TinyGPT(nn.Module):
    """Token and position embeddings, ``n_layers`` blocks, a final norm and an output head whose
    weight is the token embedding's (tied)."""

    def __init__(self, vocab: int = 256, d: int = 64, heads: int = 4, n_layers: int = 4, context: int = 64):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(context, d)
        self.layers = nn.ModuleList(Block(d, heads) for _ in range(n_layers))
        self.ln_f = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)
        self.head.weight = self.tok.weight

    def forward(self, idx):
        x = self.tok(idx) + self.pos(torch.arange(idx.shape[1], device=idx.device))
        for layer in self.layers:
            x = layer(x)
        return self.head(self.ln_f(x))


def residual_cnn() -> ResidualCNN:
    torch.manual_seed(0)
    return ResidualCNN()


def tiny_gpt() -> TinyGPT:
    torch.manual_seed(0)
    return TinyGPT()


__all__ = ["ResidualCNN", "TinyGPT", "residual_cnn", "tiny_gpt"]
