"""Realistic graphs for the scheduler: a whisper-style encoder block and a decoder step with a
KV cache, as GraphSpecs for 2 or 3 backends (devices first, the CPU last).

Weights live on device 0 (marked WEIGHTS), the MLP's weights on device 1 when there are three
backends, inputs on the CPU; the decoder's K/V cache is pre-allocated on device 0 and written
through views, as whisper.cpp's decoder does.
"""

from __future__ import annotations

from ggspec.reference.types import GGMLType

from .graphspec import GraphSpec, Leaf, Node

F32, F16, Q4_0, Q8_0, I32 = (int(GGMLType.F32), int(GGMLType.F16), int(GGMLType.Q4_0), int(GGMLType.Q8_0),
                             int(GGMLType.I32))

N_STATE, N_HEAD, N_CTX, N_MLP = 32, 2, 8, 64
HEAD = N_STATE // N_HEAD


def _places(n_backends: int) -> tuple[int, int, int]:
    """(attention weights, MLP weights, inputs) backend indexes."""
    if n_backends < 2:
        raise ValueError("the fixtures need at least two backends (a device and the CPU)")
    cpu = n_backends - 1
    return 0, 1 if n_backends >= 3 else 0, cpu


def _layer_norm(nodes: list[Node], x: str, w: str, b: str, out: str) -> None:
    nodes += [Node(f"{out}.norm", "norm", (x,), (1e-5,)), Node(f"{out}.mul", "mul", (f"{out}.norm", w)),
              Node(out, "add", (f"{out}.mul", b))]


def encoder_block(n_backends: int = 2) -> GraphSpec:
    """Self-attention and an MLP over N_CTX positions, with residuals."""
    att, mlp, inp = _places(n_backends)
    leafs = [Leaf("inp", F32, (N_STATE, N_CTX), inp, seed=1)]
    for i, (name, t, ne, place) in enumerate([
        ("ln_w", F32, (N_STATE,), att), ("ln_b", F32, (N_STATE,), att),
        ("q_w", F16, (N_STATE, N_STATE), att), ("q_b", F32, (N_STATE,), att),
        ("k_w", F16, (N_STATE, N_STATE), att),
        ("v_w", F16, (N_STATE, N_STATE), att), ("v_b", F32, (N_STATE,), att),
        ("o_w", F16, (N_STATE, N_STATE), att), ("o_b", F32, (N_STATE,), att),
        ("mlp_ln_w", F32, (N_STATE,), mlp), ("mlp_ln_b", F32, (N_STATE,), mlp),
        ("mlp0_w", F16, (N_STATE, N_MLP), mlp), ("mlp0_b", F32, (N_MLP,), mlp),
        ("mlp1_w", F16, (N_MLP, N_STATE), mlp), ("mlp1_b", F32, (N_STATE,), mlp),
    ]):
        leafs.append(Leaf(name, t, ne, place, weights=True, seed=100 + i))
    n: list[Node] = []
    _layer_norm(n, "inp", "ln_w", "ln_b", "ln0")
    n += [
        Node("Q.mm", "mul_mat", ("q_w", "ln0")), Node("Q", "add", ("Q.mm", "q_b")),
        Node("K", "mul_mat", ("k_w", "ln0")),
        Node("V.mm", "mul_mat", ("v_w", "ln0")), Node("V", "add", ("V.mm", "v_b")),
        Node("Q.r", "reshape", ("Q",), (HEAD, N_HEAD, N_CTX)), Node("Qh", "permute", ("Q.r",), (0, 2, 1, 3)),
        Node("K.r", "reshape", ("K",), (HEAD, N_HEAD, N_CTX)), Node("Kh", "permute", ("K.r",), (0, 2, 1, 3)),
        Node("KQ", "mul_mat", ("Kh", "Qh")),
        Node("KQ.soft", "soft_max_ext", ("KQ", None), (HEAD**-0.5,)),
        Node("V.r", "reshape", ("V",), (HEAD, N_HEAD, N_CTX)), Node("V.p", "permute", ("V.r",), (1, 2, 0, 3)),
        Node("Vt", "cont", ("V.p",)),
        Node("KQV", "mul_mat", ("Vt", "KQ.soft")),
        Node("KQV.p", "permute", ("KQV",), (0, 2, 1, 3)), Node("KQV.c", "cont", ("KQV.p",)),
        Node("attn.in", "reshape", ("KQV.c",), (N_STATE, N_CTX)),
        Node("attn.mm", "mul_mat", ("o_w", "attn.in")), Node("attn", "add", ("attn.mm", "o_b")),
        Node("res0", "add", ("attn", "inp")),
    ]
    _layer_norm(n, "res0", "mlp_ln_w", "mlp_ln_b", "ln1")
    n += [
        Node("mlp0.mm", "mul_mat", ("mlp0_w", "ln1")), Node("mlp0", "add", ("mlp0.mm", "mlp0_b")),
        Node("mlp.act", "gelu", ("mlp0",)),
        Node("mlp1.mm", "mul_mat", ("mlp1_w", "mlp.act")), Node("mlp1", "add", ("mlp1.mm", "mlp1_b")),
        Node("out", "add", ("mlp1", "res0")),
    ]
    return GraphSpec(tuple(leafs), tuple(n), ("out",))


N_KV = 4  # positions in the cache, the last one written by this step
N_VOCAB = 16


def decoder_step(n_backends: int = 2) -> GraphSpec:
    """One token: embedding lookup (GET_ROWS on Q8_0), K/V written into a pre-allocated cache
    through views, attention over the cache with a mask, and a Q4_0 MLP."""
    att, mlp, inp = _places(n_backends)
    row_f16 = N_STATE * 2
    leafs = [
        Leaf("token", I32, (1,), inp, seed=2, int_range=N_VOCAB),
        Leaf("kq_mask", F32, (N_KV, 1), inp, seed=3),
        Leaf("tok_emb", Q8_0, (N_STATE, N_VOCAB), att, weights=True, seed=200),
        Leaf("ln_w", F32, (N_STATE,), att, weights=True, seed=201),
        Leaf("ln_b", F32, (N_STATE,), att, weights=True, seed=202),
        Leaf("q_w", F16, (N_STATE, N_STATE), att, weights=True, seed=203),
        Leaf("k_w", F16, (N_STATE, N_STATE), att, weights=True, seed=204),
        Leaf("v_w", F16, (N_STATE, N_STATE), att, weights=True, seed=205),
        Leaf("o_w", F16, (N_STATE, N_STATE), att, weights=True, seed=206),
        Leaf("k_cache", F16, (N_STATE * N_KV,), att, seed=207),
        Leaf("v_cache", F16, (N_STATE * N_KV,), att, seed=208),
        Leaf("mlp0_w", Q4_0, (N_STATE, N_MLP), mlp, weights=True, seed=209),
        Leaf("mlp1_w", Q4_0, (N_MLP, N_STATE), mlp, weights=True, seed=210),
    ]
    last = (N_KV - 1) * row_f16
    n = [Node("x", "get_rows", ("tok_emb", "token"))]
    _layer_norm(n, "x", "ln_w", "ln_b", "ln0")
    n += [
        Node("Q", "mul_mat", ("q_w", "ln0")),
        Node("Kcur", "mul_mat", ("k_w", "ln0")), Node("Vcur", "mul_mat", ("v_w", "ln0")),
        Node("k_slot", "view", ("k_cache",), (N_STATE, last)), Node("k_write", "cpy", ("Kcur", "k_slot")),
        Node("v_slot", "view", ("v_cache",), (N_STATE, last)), Node("v_write", "cpy", ("Vcur", "v_slot")),
        Node("K", "view", ("k_cache",), (N_STATE, N_KV, row_f16, 0)),
        Node("V", "view", ("v_cache",), (N_STATE, N_KV, row_f16, 0)),
        Node("KQ", "mul_mat", ("K", "Q")),
        Node("KQ.soft", "soft_max_ext", ("KQ", "kq_mask"), (N_STATE**-0.5,)),
        Node("Vt", "transpose", ("V",)), Node("Vt.c", "cont", ("Vt",)),
        Node("KQV", "mul_mat", ("Vt.c", "KQ.soft")),
        Node("attn", "mul_mat", ("o_w", "KQV")),
        Node("res0", "add", ("attn", "x")),
        Node("mlp0", "mul_mat", ("mlp0_w", "res0")), Node("mlp.act", "silu", ("mlp0",)),
        Node("mlp1", "mul_mat", ("mlp1_w", "mlp.act")),
        Node("out", "add", ("mlp1", "res0")),
    ]
    return GraphSpec(tuple(leafs), tuple(n), ("k_write", "v_write", "out"))


FIXTURES = {"encoder": encoder_block, "decoder": decoder_step}
