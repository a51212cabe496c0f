"""The real networks perftune imports (configs/programs/networks), defined once for the ONNX export (scripts/models) and the
PyTorch peer (bench/torch_peer.py).

    NAMES                 every network, in the order scripts/models reports them
    build(name)           the network in eval mode, with seeded random weights
    example_input(name)   its fixed random input at batch 1 (the same tensor on every call)

Weights are random (torchvision's `weights=None`): nothing is downloaded. After a network's own
initialisation, what it initialises to a constant is drawn at random too (_randomize_constants),
since an end-to-end check against torch cannot see a mistake in a term that is 0 or the identity:
- normalisation layers' statistics and affine parameters (at mean 0, variance 1, scale 1,
  shift 0 a BatchNorm or LayerNorm is nearly the identity: a swapped mean and variance passes);
- weights set to zero (ViT's classifier head: its output would be identically 0) get torch's
  default init; other all-zero parameters (the biases torchvision zeroes, ViT's class token) are
  drawn from N(0, 0.02^2), BERT's and ViT's init scale;
- ConvNeXt's layer scale (1e-6: each block's branch would vanish beside its residual).
As a side effect the exporter finds no two equal initializers to merge into Identity aliases.

Needs torch and torchvision: Debian's python3-torch 1.13 and python3-torchvision 0.14.
"""
import math

import torch
import torchvision

kWeightSeed = 0  # torch.manual_seed before each network is built: its weights do not depend on
kInputSeed = 1   # which other networks were built first, nor on the input's draw

# torchvision.models constructors, all at 224x224 (their ImageNet resolution).
_TORCHVISION = {
    "resnet18": {},
    "resnet50": {},
    "mobilenet_v2": {},
    "mobilenet_v3_small": {},
    "efficientnet_b0": {},
    "squeezenet1_1": {},
    "shufflenet_v2_x1_0": {},
    "densenet121": {},
    # Without the auxiliary heads (they only run in training) and with torchvision's own
    # truncated-normal init (its default, init_weights=None, warns and picks the same).
    "googlenet": {"aux_logits": False, "init_weights": True},
    "regnet_y_400mf": {},
    "convnext_tiny": {},
    "vit_b_16": {},
}

# BERT-base's encoder layer (Devlin et al. 2019: hidden 768, 12 heads, feed-forward 3072) at
# sequence length 128, the length BERT was pre-trained at for 90% of its steps.
kBertDModel, kBertHeads, kBertFeedForward, kBertSeq = 768, 12, 3072, 128

# A small GPT-2-style block (Radford et al. 2019 layout, scaled down): width 256, 4 heads, 64 tokens.
kGptDModel, kGptHeads, kGptSeq = 256, 4, 64
kMaskValue = -1e9  # added to masked scores: exp underflows to exactly 0 after the max is taken out

NAMES = list(_TORCHVISION) + ["bert_encoder_layer", "gpt_block"]


class GptBlock(torch.nn.Module):
    """x + attn(ln1(x)), then x + mlp(ln2(x)): pre-LayerNorm, causal self-attention with a
    constant additive mask, GELU MLP of width 4 d. Every shape is a Python constant, so the
    export has constant Reshape shapes and no Shape arithmetic."""

    def __init__(self, d_model: int = kGptDModel, heads: int = kGptHeads, seq: int = kGptSeq):
        super().__init__()
        assert d_model % heads == 0
        self.d_model, self.heads, self.seq, self.head_dim = d_model, heads, seq, d_model // heads
        self.ln1 = torch.nn.LayerNorm(d_model)
        self.query = torch.nn.Linear(d_model, d_model)
        self.key = torch.nn.Linear(d_model, d_model)
        self.value = torch.nn.Linear(d_model, d_model)
        self.proj = torch.nn.Linear(d_model, d_model)
        self.ln2 = torch.nn.LayerNorm(d_model)
        self.fc1 = torch.nn.Linear(d_model, 4 * d_model)
        self.gelu = torch.nn.GELU()
        self.fc2 = torch.nn.Linear(4 * d_model, d_model)
        mask = torch.triu(torch.full((seq, seq), kMaskValue), diagonal=1)  # 0 on and below the diagonal
        self.register_buffer("mask", mask)

    def _heads(self, x: torch.Tensor) -> torch.Tensor:  # [1, seq, d] -> [1, heads, seq, head_dim]
        return x.reshape(1, self.seq, self.heads, self.head_dim).transpose(1, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.ln1(x)
        q, k, v = self._heads(self.query(h)), self._heads(self.key(h)), self._heads(self.value(h))
        scores = torch.matmul(q, k.transpose(2, 3)) / math.sqrt(self.head_dim) + self.mask
        attended = torch.matmul(torch.softmax(scores, dim=-1), v)
        x = x + self.proj(attended.transpose(1, 2).reshape(1, self.seq, self.d_model))
        return x + self.fc2(self.gelu(self.fc1(self.ln2(x))))


def input_shape(name):
    """The network's input shape at batch 1."""
    if name in _TORCHVISION:
        return (1, 3, 224, 224)
    if name == "bert_encoder_layer":
        return (1, kBertSeq, kBertDModel)
    if name == "gpt_block":
        return (1, kGptSeq, kGptDModel)
    raise KeyError(f"unknown network {name!r} (known: {', '.join(NAMES)})")


def _randomize_constants(model, generator):
    """Draws what the network initialised to a constant (see the module comment). Scales and
    variances in [0.5, 1.5] keep each layer's gain near 1, so deep networks neither blow up nor
    vanish."""
    norms = (torch.nn.modules.batchnorm._BatchNorm, torch.nn.LayerNorm, torch.nn.GroupNorm)
    weighted = (torch.nn.Linear, torch.nn.modules.conv._ConvNd)
    with torch.no_grad():
        for module in model.modules():
            if isinstance(module, norms):
                if getattr(module, "weight", None) is not None:
                    module.weight.copy_(0.5 + torch.rand(module.weight.shape, generator=generator))
                    module.bias.copy_(0.1 * torch.randn(module.bias.shape, generator=generator))
                if getattr(module, "running_mean", None) is not None:
                    module.running_mean.copy_(0.1 * torch.randn(module.running_mean.shape, generator=generator))
                    module.running_var.copy_(0.5 + torch.rand(module.running_var.shape, generator=generator))
            elif isinstance(module, weighted) and not module.weight.any():
                module.reset_parameters()  # from the seeded global generator
            elif isinstance(module, torchvision.models.convnext.CNBlock):
                module.layer_scale.copy_(0.5 + torch.rand(module.layer_scale.shape, generator=generator))
        for parameter in model.parameters():
            if not parameter.any():
                parameter.copy_(0.02 * torch.randn(parameter.shape, generator=generator))


def build(name):
    """The network `name` in eval mode with seeded random weights (the same on every call)."""
    if name not in NAMES:
        raise KeyError(f"unknown network {name!r} (known: {', '.join(NAMES)})")
    torch.manual_seed(kWeightSeed)
    if name in _TORCHVISION:
        model = getattr(torchvision.models, name)(weights=None, **_TORCHVISION[name])
    elif name == "bert_encoder_layer":
        model = torch.nn.TransformerEncoderLayer(d_model=kBertDModel, nhead=kBertHeads,
                                                 dim_feedforward=kBertFeedForward, batch_first=True)
    else:
        model = GptBlock()
    _randomize_constants(model, torch.Generator().manual_seed(kWeightSeed))
    return model.eval()


def example_input(name):
    """The network's fixed random input (standard normal) at batch 1."""
    return torch.randn(input_shape(name), generator=torch.Generator().manual_seed(kInputSeed))
