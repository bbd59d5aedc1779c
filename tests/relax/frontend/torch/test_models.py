"""Whole networks through both PyTorch frontends: ResNet-18, MobileNetV2, a small vision
transformer and a BERT-style encoder block, written from ``torch.nn`` modules (torchvision
does not load beside the CPU build of torch) with random weights, built for the host and
compared with torch's outputs. Inputs are small (32x32 images, 8 tokens) so each network
builds and runs in seconds."""
import math

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="the PyTorch frontends need torch "
                                            "(pip install mlcbench[torch])")
from torch import nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402


# -- ResNet-18 (torchvision's layout) ----------------------------------------------------

class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.downsample = None
        if stride != 1 or cin != cout:
            self.downsample = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False),
                                            nn.BatchNorm2d(cout))

    def forward(self, x):
        identity = x if self.downsample is None else self.downsample(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return self.relu(out + identity)


class ResNet18(nn.Module):
    def __init__(self, num_classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 64, 7, 2, 3, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(3, 2, 1)
        layers, cin = [], 64
        for cout, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
            layers.append(nn.Sequential(BasicBlock(cin, cout, stride),
                                        BasicBlock(cout, cout, 1)))
            cin = cout
        self.layer1, self.layer2, self.layer3, self.layer4 = layers
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(512, num_classes)

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(torch.flatten(self.avgpool(x), 1))


# -- MobileNetV2 (depthwise convolutions: groups = channels) -----------------------------

def conv_bn_relu6(cin, cout, kernel, stride, groups=1):
    return nn.Sequential(nn.Conv2d(cin, cout, kernel, stride, (kernel - 1) // 2,
                                   groups=groups, bias=False),
                         nn.BatchNorm2d(cout), nn.ReLU6(inplace=True))


class InvertedResidual(nn.Module):
    def __init__(self, cin, cout, stride, expand):
        super().__init__()
        hidden = cin * expand
        self.use_residual = stride == 1 and cin == cout
        layers = [conv_bn_relu6(cin, hidden, 1, 1)] if expand != 1 else []
        layers += [conv_bn_relu6(hidden, hidden, 3, stride, groups=hidden),
                   nn.Conv2d(hidden, cout, 1, 1, 0, bias=False), nn.BatchNorm2d(cout)]
        self.conv = nn.Sequential(*layers)

    def forward(self, x):
        return x + self.conv(x) if self.use_residual else self.conv(x)


class MobileNetV2(nn.Module):
    SETTINGS = ((1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1),
                (6, 160, 3, 2), (6, 320, 1, 1))

    def __init__(self, num_classes=10, width=0.5):
        super().__init__()
        cin = int(32 * width)
        features = [conv_bn_relu6(3, cin, 3, 2)]
        for expand, channels, repeats, stride in self.SETTINGS:
            cout = max(8, int(channels * width))
            for k in range(repeats):
                features.append(InvertedResidual(cin, cout, stride if k == 0 else 1, expand))
                cin = cout
        features.append(conv_bn_relu6(cin, 1280, 1, 1))
        self.features = nn.Sequential(*features)
        self.classifier = nn.Sequential(nn.Dropout(0.2), nn.Linear(1280, num_classes))

    def forward(self, x):
        x = F.adaptive_avg_pool2d(self.features(x), (1, 1))
        return self.classifier(torch.flatten(x, 1))


# -- a small vision transformer -----------------------------------------------------------

class ViTBlock(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attn = nn.MultiheadAttention(dim, heads, batch_first=True)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 2 * dim), nn.GELU(), nn.Dropout(0.1),
                                 nn.Linear(2 * dim, dim))

    def forward(self, x):
        y = self.norm1(x)
        x = x + self.attn(y, y, y, need_weights=False)[0]
        return x + self.mlp(self.norm2(x))


class ViT(nn.Module):
    def __init__(self, image=32, patch=8, dim=64, heads=4, depth=2, num_classes=10):
        super().__init__()
        self.patch_embed = nn.Conv2d(3, dim, patch, patch)
        tokens = (image // patch) ** 2
        self.cls_token = nn.Parameter(torch.randn(1, 1, dim) * 0.02)
        self.pos_embed = nn.Parameter(torch.randn(1, tokens + 1, dim) * 0.02)
        self.blocks = nn.Sequential(*(ViTBlock(dim, heads) for _ in range(depth)))
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, num_classes)

    def forward(self, x):
        x = self.patch_embed(x).flatten(2).transpose(1, 2)
        cls = self.cls_token.expand(x.shape[0], -1, -1)
        x = torch.cat([cls, x], dim=1) + self.pos_embed
        x = self.norm(self.blocks(x))
        return self.head(x[:, 0])


# -- a BERT encoder block (the layout of Hugging Face's BertLayer) ------------------------

class BertSelfAttention(nn.Module):
    def __init__(self, hidden, heads):
        super().__init__()
        self.heads, self.head_dim = heads, hidden // heads
        self.query, self.key = nn.Linear(hidden, hidden), nn.Linear(hidden, hidden)
        self.value = nn.Linear(hidden, hidden)
        self.dropout = nn.Dropout(0.1)

    def split_heads(self, x):
        return x.view(x.size(0), x.size(1), self.heads, self.head_dim).permute(0, 2, 1, 3)

    def forward(self, hidden_states, attention_mask):
        q = self.split_heads(self.query(hidden_states))
        k = self.split_heads(self.key(hidden_states))
        v = self.split_heads(self.value(hidden_states))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_dim)
        probs = self.dropout(F.softmax(scores + attention_mask, dim=-1))
        context = torch.matmul(probs, v).permute(0, 2, 1, 3).contiguous()
        return context.view(context.size(0), context.size(1), -1)


class BertLayer(nn.Module):
    def __init__(self, hidden=64, heads=4, intermediate=256):
        super().__init__()
        self.attention = BertSelfAttention(hidden, heads)
        self.attn_out = nn.Linear(hidden, hidden)
        self.attn_norm = nn.LayerNorm(hidden, eps=1e-12)
        self.intermediate = nn.Linear(hidden, intermediate)
        self.output = nn.Linear(intermediate, hidden)
        self.out_norm = nn.LayerNorm(hidden, eps=1e-12)
        self.dropout = nn.Dropout(0.1)

    def forward(self, hidden_states, attention_mask):
        attn = self.dropout(self.attn_out(self.attention(hidden_states, attention_mask)))
        hidden_states = self.attn_norm(attn + hidden_states)
        inner = F.gelu(self.intermediate(hidden_states))
        return self.out_norm(self.dropout(self.output(inner)) + hidden_states)


def randomized(model):
    """Random batch-norm statistics too, so folding them in is actually exercised."""
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, nn.BatchNorm2d):
                m.running_mean.uniform_(-0.5, 0.5)
                m.running_var.uniform_(0.5, 1.5)
                m.weight.uniform_(0.5, 1.5)
                m.bias.uniform_(-0.5, 0.5)
    return model.eval()


def image(size=32):
    return [np.random.default_rng(0).standard_normal((1, 3, size, size)).astype("float32")]


def test_resnet18(assert_like_torch):
    torch.manual_seed(0)
    assert_like_torch(randomized(ResNet18()), image(), rtol=1e-4, atol=1e-4)


def test_mobilenet_v2(assert_like_torch):
    torch.manual_seed(0)
    assert_like_torch(randomized(MobileNetV2()), image(), rtol=1e-4, atol=1e-4)


def test_vision_transformer(assert_like_torch):
    torch.manual_seed(0)
    assert_like_torch(ViT().eval(), image(), rtol=1e-4, atol=1e-4)


def test_bert_encoder_block(assert_like_torch):
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    hidden = rng.standard_normal((2, 8, 64)).astype("float32")
    mask = np.zeros((2, 1, 1, 8), "float32")
    mask[1, ..., 6:] = -10000.0          # the second sequence has two padding tokens
    assert_like_torch(BertLayer().eval(), [hidden, mask], rtol=1e-4, atol=1e-4)
