"""Small fused blocks cut from real networks (bench/fused_blocks.py), defined once for the ONNX
export and the PyTorch peer, as scripts/models_zoo.py defines whole networks.

    NAMES                  every block, in the order the benchmark reports them
    BLOCKS[name]           its Block: where its shapes come from, its inputs' names and shapes
    build(name)            the block in eval mode, with seeded random weights
    example_inputs(name)   its fixed random inputs at batch 1, a tuple (the same tensors on every call)

A block is the few ops a compiler would fuse into one kernel around a dot or a convolution: the
op itself, its bias, its activation, and what reads its output next (a pool, a residual add, a
LayerNorm), at the shapes of the network it was cut from, f32, batch 1. A block whose real input is
the output of an earlier layer (the residual, attention's Q, K and V) takes it as an input of
its own, so both peers run exactly the ops listed, no more.

Weights are random and seeded, with models_zoo's randomisation of constants (LayerNorm's scale and
shift would otherwise be 1 and 0, which a check against torch cannot tell from a missing op).
"""
import collections
import math

import torch

import models_zoo

kWeightSeed = models_zoo.kWeightSeed
kInputSeed = models_zoo.kInputSeed

# BERT-base (Devlin et al. 2019): hidden 768, 12 heads of 64, feed-forward 3072, at sequence 128.
kBertDModel, kBertHeads, kBertFeedForward, kBertSeq = (models_zoo.kBertDModel, models_zoo.kBertHeads,
                                                       models_zoo.kBertFeedForward, models_zoo.kBertSeq)


class ConvBiasRelu(torch.nn.Module):
    """relu(conv(x) + bias), then a max-pool when pool is (kernel, stride, padding)."""

    def __init__(self, in_channels: int, out_channels: int, kernel: int, pool=None):
        super().__init__()
        self.conv = torch.nn.Conv2d(in_channels, out_channels, kernel, padding=kernel // 2, bias=True)
        self.relu = torch.nn.ReLU()
        self.pool = torch.nn.MaxPool2d(*pool) if pool else torch.nn.Identity()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(self.relu(self.conv(x)))


class ConvBiasResidualRelu(torch.nn.Module):
    """relu(conv3x3(h) + bias + shortcut): the end of ResNet's basic block (its BatchNorm folded
    into the bias, as inference does), with the shortcut an input of its own."""

    def __init__(self, channels: int):
        super().__init__()
        self.conv = torch.nn.Conv2d(channels, channels, 3, padding=1, bias=True)

    def forward(self, h: torch.Tensor, shortcut: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.conv(h) + shortcut)


class LinearGelu(torch.nn.Module):
    """gelu(x W^T + b), exact (erf) GELU as BERT's feed-forward uses it."""

    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = torch.nn.Linear(in_features, out_features)
        self.gelu = torch.nn.GELU()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.gelu(self.linear(x))


class LayerNormLinear(torch.nn.Module):
    """linear(layer_norm(x)): a LayerNorm and the projection that reads it."""

    def __init__(self, features: int, out_features: int):
        super().__init__()
        self.norm = torch.nn.LayerNorm(features)
        self.linear = torch.nn.Linear(features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.linear(self.norm(x))


class LinearResidualLayerNorm(torch.nn.Module):
    """layer_norm(h W^T + b + residual): BERT's output sub-layer (dropout is the identity at inference)."""

    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = torch.nn.Linear(in_features, out_features)
        self.norm = torch.nn.LayerNorm(out_features)

    def forward(self, h: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        return self.norm(self.linear(h) + residual)


class AttentionCore(torch.nn.Module):
    """softmax(Q K^T / sqrt(d)) V over every head at once: scaled dot-product attention without
    its projections or a mask. Q, K and V are [1, heads, seq, d]."""

    def __init__(self, head_dim: int):
        super().__init__()
        self.scale = 1.0 / math.sqrt(head_dim)

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        return torch.matmul(torch.softmax(torch.matmul(q, k.transpose(2, 3)) * self.scale, dim=-1), v)


Block = collections.namedtuple("Block", "source make input_names input_shapes")

_bert_tokens = (1, kBertSeq, kBertDModel)
_bert_heads = (1, kBertHeads, kBertSeq, kBertDModel // kBertHeads)
BLOCKS = {
    # ResNet-50 layer1's expanding 1x1 (64 -> 256 at 56 x 56), then the 3x3/2 max-pool of ResNet's stem.
    "conv1x1_relu_maxpool": Block("ResNet-50 layer1 1x1 64->256 at 56x56, 3x3/2 max-pool",
                                  lambda: ConvBiasRelu(64, 256, 1, pool=(3, 2, 1)), ["input"], [(1, 64, 56, 56)]),
    # ResNet-18 layer2's 3x3 (128 -> 128 at 28 x 28).
    "conv3x3_relu": Block("ResNet-18 layer2 3x3 128->128 at 28x28",
                          lambda: ConvBiasRelu(128, 128, 3), ["input"], [(1, 128, 28, 28)]),
    "conv3x3_residual_relu": Block("ResNet-18 layer2 basic block's second 3x3 + shortcut, 28x28x128",
                                   lambda: ConvBiasResidualRelu(128), ["input", "shortcut"],
                                   [(1, 128, 28, 28), (1, 128, 28, 28)]),
    "gemm_gelu": Block("BERT-base FFN up-projection 128x768 @ 768x3072 + GELU",
                       lambda: LinearGelu(kBertDModel, kBertFeedForward), ["input"], [_bert_tokens]),
    # The fused QKV projection of torch's MultiheadAttention (in_proj: 768 -> 3 x 768) after a pre-LayerNorm.
    "layernorm_qkv": Block("BERT-base LayerNorm(768) + QKV projection 768->2304, seq 128",
                           lambda: LayerNormLinear(kBertDModel, 3 * kBertDModel), ["input"], [_bert_tokens]),
    "gemm_residual_layernorm": Block("BERT-base output sub-layer: 128x3072 @ 3072x768 + residual, LayerNorm",
                                     lambda: LinearResidualLayerNorm(kBertFeedForward, kBertDModel),
                                     ["input", "residual"], [(1, kBertSeq, kBertFeedForward), _bert_tokens]),
    "attention_core": Block("BERT-base attention core: 12 heads, seq 128, d 64",
                            lambda: AttentionCore(kBertDModel // kBertHeads), ["q", "k", "v"], [_bert_heads] * 3),
}
NAMES = list(BLOCKS)


def _block(name):
    if name not in BLOCKS:
        raise KeyError(f"unknown block {name!r} (known: {', '.join(NAMES)})")
    return BLOCKS[name]


def build(name):
    """The block `name` in eval mode with seeded random weights (the same on every call)."""
    block = _block(name)
    torch.manual_seed(kWeightSeed)
    model = block.make()
    models_zoo._randomize_constants(model, torch.Generator().manual_seed(kWeightSeed))  # noqa: SLF001 - one rule for both zoos
    return model.eval()


def example_inputs(name):
    """The block's fixed random inputs (standard normal), one tensor per input, at batch 1."""
    generator = torch.Generator().manual_seed(kInputSeed)
    return tuple(torch.randn(shape, generator=generator) for shape in _block(name).input_shapes)
