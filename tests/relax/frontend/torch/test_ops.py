"""Converters, a few at a time: small modules of torch functions, methods and nn modules,
imported through both frontends, built and compared with torch (each module also
returns several results, so one build covers a family of converters)."""
import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="the PyTorch frontends need torch "
                                            "(pip install mlcbench[torch])")
from torch import nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402


def randn(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype("float32")


class Indexing(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("order", torch.tensor([2, 0, 3]))

    def forward(self, x):
        return (x[:, 1:3], x[..., ::2], x[0, None], x[:, -1], x[1:, :, 2:5:2, None],
                x[:, self.order], x.select(2, 1), x.narrow(3, 1, 2))


def test_indexing(assert_like_torch):
    assert_like_torch(Indexing(), [randn(2, 4, 5, 6)])


class Shapes(nn.Module):
    def forward(self, x, y):
        a = x.view(x.size(0), -1).reshape(2, 3, 20).permute(2, 0, 1).transpose(0, 1)
        b = torch.flatten(x, 1, 2).unflatten(1, (3, 4)).unsqueeze(0).squeeze(0).squeeze(1)
        c = torch.cat([x, y.expand(2, 3, 4, 5)], dim=1)
        d = torch.stack([x, x * 2], dim=-1)
        e, f = torch.chunk(x, 2, dim=3)[0], x.split([1, 2], dim=1)[1]
        g = y.repeat(2, 1, 1, 2)
        h = torch.unbind(x, 1)[2] + x.shape[3]
        i = x + torch.arange(5, dtype=torch.float32) * torch.ones(4, 1)
        return a, b, c, d, e, f, g, h, i, x[0, 0].t()


def test_shapes(assert_like_torch):
    assert_like_torch(Shapes(), [randn(2, 3, 4, 5), randn(1, 1, 4, 5, seed=1)])


class Elementwise(nn.Module):
    def forward(self, x, y):
        return (torch.add(x, y, alpha=2), 1 - x, x / 2, 2 / (x.abs() + 1), x ** 2, -x,
                torch.clamp(x, -0.5, 0.5), F.hardswish(x), F.hardsigmoid(x),
                F.leaky_relu(x, 0.2), F.gelu(x, approximate="tanh"), F.gelu(x), F.silu(x),
                torch.sigmoid(x), torch.tanh(x), torch.exp(x), F.relu6(x * 4),
                torch.maximum(x, y), torch.where(x > y, x, y), torch.where(x < 0, 0.0, x),
                torch.sqrt(x.abs()), torch.rsqrt(x.abs() + 1), torch.erf(x), x.float(),
                x.masked_fill(x > 0.5, -1.0), x + (y > 0).long(), (x > 0) * y,
                (x > 0).long() * 0.5, (x > 0).long() / 2)


def test_elementwise(assert_like_torch):
    assert_like_torch(Elementwise(), [randn(3, 4), randn(3, 4, seed=1)])


class Reductions(nn.Module):
    def forward(self, x):
        return (x.mean(dim=(2, 3), keepdim=True), torch.sum(x, 1), x.amax(-1),
                torch.mean(x), F.softmax(x, dim=1), F.log_softmax(x, -1), x.softmax(-1))


def test_reductions(assert_like_torch):
    assert_like_torch(Reductions(), [randn(2, 3, 4, 5)])


class Convolutions(nn.Module):
    def __init__(self):
        super().__init__()
        self.same = nn.Conv2d(4, 6, 3, padding="same", dilation=2)
        self.strided = nn.Conv2d(4, 8, 3, stride=2, padding=1, groups=2)
        self.up = nn.ConvTranspose2d(4, 2, 3, stride=2, padding=1, output_padding=1)
        self.avg = nn.AvgPool2d(3, 2, padding=1, ceil_mode=True, count_include_pad=False)
        self.max = nn.MaxPool2d(2, ceil_mode=True)
        self.adaptive = nn.AdaptiveAvgPool2d((3, 3))

    def forward(self, x):
        return (self.same(x), self.strided(x), self.up(x), self.avg(x), self.max(x),
                self.adaptive(x), F.avg_pool2d(x, 3), F.max_pool2d(x, 3, 1, 1))


def test_convolutions_and_pooling(assert_like_torch):
    torch.manual_seed(0)
    assert_like_torch(Convolutions(), [randn(1, 4, 9, 9)], rtol=1e-4, atol=1e-5)


class Attention(nn.Module):
    def forward(self, q, k, v, bias):
        causal = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        masked = F.scaled_dot_product_attention(q, k, v, attn_mask=bias > 0)
        biased = F.scaled_dot_product_attention(q, k, v, attn_mask=bias, scale=0.3)
        return causal, masked, biased


def test_scaled_dot_product_attention(assert_like_torch):
    q, k, v = randn(2, 3, 5, 8), randn(2, 3, 5, 8, seed=1), randn(2, 3, 5, 8, seed=2)
    bias = randn(5, 5, seed=3)
    bias[:, 0] = 1.0                 # every query sees at least one key
    assert_like_torch(Attention(), [q, k, v, bias], rtol=1e-4, atol=1e-5)


class SequenceFirstMHA(nn.Module):
    def __init__(self):
        super().__init__()
        self.attn = nn.MultiheadAttention(16, 4)
        self.cross = nn.MultiheadAttention(16, 2, kdim=8, vdim=8, bias=False,
                                           batch_first=True)
        self.register_buffer("future", torch.ones(5, 5, dtype=torch.bool).triu(1))

    def forward(self, x, memory, padding):
        out, weights = self.attn(x, x, x, key_padding_mask=padding)
        masked, _ = self.attn(x, x, x, attn_mask=self.future, need_weights=False)
        cross, per_head = self.cross(x.transpose(0, 1), memory, memory,
                                     average_attn_weights=False)
        return out, weights, masked, cross, per_head


def test_multihead_attention(assert_like_torch):
    torch.manual_seed(0)
    padding = np.zeros((2, 5), bool)
    padding[1, 3:] = True
    assert_like_torch(SequenceFirstMHA(), [randn(5, 2, 16), randn(2, 7, 8, seed=1), padding],
                      rtol=1e-4, atol=1e-5)


class Embeddings(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(10, 6)
        self.norm = nn.LayerNorm(6, elementwise_affine=False)

    def forward(self, ids):
        return self.norm(self.embed(ids)), F.layer_norm(self.embed(ids), (6,))


def test_embedding_and_layer_norm_without_affine(assert_like_torch):
    torch.manual_seed(0)
    assert_like_torch(Embeddings(), [np.array([[1, 4, 9], [0, 0, 3]], "int64")],
                      rtol=1e-4, atol=1e-5)


class Encoders(nn.Module):
    def __init__(self):
        super().__init__()
        self.post_norm = nn.TransformerEncoderLayer(16, 2, 32, dropout=0.1, batch_first=True)
        self.pre_norm = nn.TransformerEncoder(
            nn.TransformerEncoderLayer(16, 4, 32, activation="gelu", norm_first=True,
                                       batch_first=True), 2, norm=nn.LayerNorm(16),
            enable_nested_tensor=False)

    def forward(self, x):
        return self.post_norm(x), self.pre_norm(x)


def test_transformer_encoder_modules(assert_like_torch):
    torch.manual_seed(0)
    assert_like_torch(Encoders(), [randn(2, 5, 16)], rtol=1e-4, atol=1e-5)
