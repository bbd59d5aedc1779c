"""Attention: ``F.scaled_dot_product_attention`` and ``nn.MultiheadAttention``, composed
from matmul, softmax and masks (no fused attention kernel)::

    scores = (q @ k^T) * scale  (+ mask, or -inf where a boolean mask is False)
    out    = softmax(scores, -1) @ v
"""
from __future__ import annotations

import math

import numpy as np

from ....ir.errors import IRError
from ... import op as R
from ...expr import const
from . import ops, shape_ops


def _masked(t, scores, mask):
    """Add a float mask; a boolean mask keeps scores where True, -inf elsewhere."""
    if t.dtype_of(mask) == "bool":
        minus_inf = const(np.asarray(-np.inf, t.dtype_of(scores)))
        return t.emit(R.where(mask, scores, minus_inf))
    return t.emit(R.add(scores, mask))


def _causal_mask(t, scores):
    """torch's ``is_causal``: query i sees keys 0..i (top-left aligned)."""
    rows, cols = t.shape_of(scores)[-2:]
    keep = np.tril(np.ones((rows, cols), dtype=bool))
    bias = np.where(keep, 0.0, -np.inf).astype(t.dtype_of(scores))
    return t.emit(R.add(scores, const(bias)))


def attention_probs(t, query, key, attn_mask=None, is_causal=False, scale=None):
    """``softmax(q @ k^T * scale + mask)`` over the last axis."""
    head_dim = t.shape_of(query)[-1]
    scale = 1.0 / math.sqrt(head_dim) if scale is None else scale
    key_t = shape_ops.transpose(t, key, -2, -1)
    scores = t.emit(R.matmul(query, key_t))
    scores = t.emit(R.multiply(scores, ops.scalar_like(t, scale, scores)))
    if is_causal:
        scores = _causal_mask(t, scores)
    if attn_mask is not None:
        scores = _masked(t, scores, attn_mask)
    return t.emit(R.nn.softmax(scores, axis=-1))


def scaled_dot_product_attention(t, query, key, value, attn_mask=None, dropout_p=0.0,
                                 is_causal=False, scale=None, enable_gqa=False):
    if enable_gqa:
        raise IRError("scaled_dot_product_attention: enable_gqa=True is not supported")
    probs = attention_probs(t, query, key, attn_mask, is_causal, scale)
    return t.emit(R.matmul(probs, value))


def _projections(t, module):
    """(weight, bias) of the query, key and value projections of an MHA module."""
    embed = module.embed_dim
    bias = t.module_weight(module, "in_proj_bias")
    if module._qkv_same_embed_dim:
        weight = t.module_weight(module, "in_proj_weight")
        weights = [t.emit(R.strided_slice(weight, [0], [k * embed], [(k + 1) * embed]))
                   for k in range(3)]
    else:
        weights = [t.module_weight(module, f"{n}_proj_weight") for n in "qkv"]
    if bias is None:
        return [(w, None) for w in weights]
    biases = [t.emit(R.strided_slice(bias, [0], [k * embed], [(k + 1) * embed]))
              for k in range(3)]
    return list(zip(weights, biases))


def _heads(t, x, projection, num_heads):
    """(N, L, E) -> projected, split into heads: (N, H, L, E / H)."""
    x = ops.linear(t, x, *projection)
    n, length, embed = t.shape_of(x)
    x = shape_ops.reshape(t, x, [n, length, num_heads, embed // num_heads])
    return shape_ops.permute(t, x, [0, 2, 1, 3])


def _combined_mask(t, module, attn_mask, key_padding_mask, batch, length):
    """One additive or boolean mask broadcasting to (N, H, L, S)."""
    if key_padding_mask is None:
        return attn_mask
    # key_padding_mask is True where a key is padding: those keys are hidden.
    keep = t.emit(R.equal(key_padding_mask, const(np.asarray(False))))
    keep = shape_ops.reshape(t, keep, [batch, 1, 1, t.shape_of(keep)[-1]])
    if attn_mask is None:
        return keep
    if t.dtype_of(attn_mask) == "bool":
        return t.emit(R.where(attn_mask, keep, const(np.asarray(False))))
    minus_inf = const(np.asarray(-np.inf, t.dtype_of(attn_mask)))
    return t.emit(R.where(keep, attn_mask, minus_inf))


def multihead_attention(t, module, query, key, value, key_padding_mask=None,
                        need_weights=True, attn_mask=None, average_attn_weights=True,
                        is_causal=False):
    """``nn.MultiheadAttention.forward``: ``(output, weights or None)``."""
    if module.bias_k is not None or module.add_zero_attn:
        raise IRError("MultiheadAttention: add_bias_kv and add_zero_attn are not supported")
    if not module.batch_first:     # (L, N, E) -> (N, L, E)
        query, key, value = (shape_ops.transpose(t, x, 0, 1) for x in (query, key, value))
    batch, length = t.shape_of(query)[:2]
    if attn_mask is not None and t.dtype_of(attn_mask) == "bool":
        # torch's boolean attn_mask is True where attention is NOT allowed.
        attn_mask = t.emit(R.equal(attn_mask, const(np.asarray(False))))
    mask = _combined_mask(t, module, attn_mask, key_padding_mask, batch, length)
    q_proj, k_proj, v_proj = _projections(t, module)
    heads = [_heads(t, x, p, module.num_heads) for x, p in
             ((query, q_proj), (key, k_proj), (value, v_proj))]
    probs = attention_probs(t, heads[0], heads[1], mask, is_causal and attn_mask is None)
    out = t.emit(R.matmul(probs, heads[2]))                 # (N, H, L, D)
    out = shape_ops.permute(t, out, [0, 2, 1, 3])
    out = shape_ops.reshape(t, out, [batch, length, module.embed_dim])
    out = ops.linear(t, out, t.module_weight(module, "out_proj.weight"),
                     t.module_weight(module, "out_proj.bias"))
    if not module.batch_first:
        out = shape_ops.transpose(t, out, 0, 1)
    if not need_weights:
        return (out, None)
    weights = t.emit(R.mean(probs, [1])) if average_attn_weights else probs
    return (out, weights)
