"""slerp and Chunked Similarity Alignment: their invariants."""

import itertools

import pytest
import torch

from musicvid.pictures.slerp import align, alignment_permutation, chunk_similarity, slerp


def test_slerp_endpoints_are_exact():
    torch.manual_seed(0)
    a, b = torch.randn(77, 32), torch.randn(77, 32)
    assert torch.equal(slerp(a, b, 0.0), a)
    assert torch.equal(slerp(a, b, 1.0), b)
    both = slerp(a, b, torch.tensor([0.0, 1.0]))
    assert torch.equal(both[0], a) and torch.equal(both[1], b)


def test_slerp_keeps_unit_vectors_on_the_sphere():
    torch.manual_seed(1)
    a = torch.nn.functional.normalize(torch.randn(1000), dim=0)
    b = torch.nn.functional.normalize(torch.randn(1000), dim=0)
    norms = slerp(a, b, torch.linspace(0, 1, 11)).norm(dim=1)
    assert torch.allclose(norms, torch.ones(11), atol=1e-5)


def test_slerp_of_nearly_equal_inputs_has_no_nan():
    a = torch.randn(4, 77, 16)
    b = a + 1e-7
    out = slerp(a, b, torch.linspace(0, 1, 5))
    assert torch.isfinite(out).all()
    assert torch.allclose(out[2], a, atol=1e-5)
    assert torch.isfinite(slerp(a, a.clone(), 0.5)).all()


def test_slerp_of_float16_inputs_is_computed_in_float32():
    torch.manual_seed(2)
    a, b = torch.randn(77, 64), torch.randn(77, 64)
    a16, b16 = a.half(), b.half()
    out = slerp(a16, b16, 0.3)
    assert out.dtype == torch.float32
    reference = slerp(a16.float(), b16.float(), 0.3)
    assert torch.allclose(out, reference, atol=1e-6)
    # rounding only the inputs to half precision: the result is as good as half-precision inputs allow
    assert (out - slerp(a, b, 0.3)).abs().max() < 5e-3


def _chunk_shuffled(p, chunk, generator):
    full = (p.shape[0] - 1) // chunk
    order = torch.randperm(full, generator=generator)
    q = p.clone()
    for slot, source in enumerate(order.tolist()):
        q[1 + slot * chunk : 1 + (slot + 1) * chunk] = p[1 + source * chunk : 1 + (source + 1) * chunk]
    return q


@pytest.mark.parametrize("chunk", [1, 2, 4, 5, 19, 38])
def test_csa_is_a_row_permutation_that_keeps_row_0(chunk):
    g = torch.Generator().manual_seed(chunk)
    p0, p1 = torch.randn(77, 24, generator=g), torch.randn(77, 24, generator=g)
    order = alignment_permutation(p0, p1, chunk)
    assert sorted(order.tolist()) == list(range(77))
    assert order[0] == 0
    aligned = align(p0, p1, chunk)
    assert torch.equal(aligned[0], p1[0])
    assert torch.equal(aligned, p1[order])


@pytest.mark.parametrize("chunk", [2, 4, 19])
def test_csa_undoes_a_chunk_permutation(chunk):
    g = torch.Generator().manual_seed(7)
    p0 = torch.randn(77, 48, generator=g)
    p1 = _chunk_shuffled(p0, chunk, g)
    assert not torch.equal(p1, p0)
    assert torch.equal(align(p0, p1, chunk), p0)


@pytest.mark.parametrize("seed", range(5))
def test_csa_assignment_is_the_best_of_all_permutations(seed):
    g = torch.Generator().manual_seed(seed)
    p0, p1 = torch.randn(11, 6, generator=g), torch.randn(11, 6, generator=g)  # 5 chunks of 2
    scores = chunk_similarity(p0, p1, 2)
    best = max(itertools.permutations(range(5)), key=lambda perm: sum(scores[a, b] for a, b in enumerate(perm)))
    expected = [0] + [1 + 2 * b + j for b in best for j in range(2)]
    assert alignment_permutation(p0, p1, 2).tolist() == expected


def realistic_pair():
    """Two prompt embeddings with shared structure, as CLIP gives: a common direction per row
    position (positional signal) plus word content, the same words at different places."""
    g = torch.Generator().manual_seed(3)
    width = 64
    positional = torch.randn(77, width, generator=g) * 0.5
    words = torch.randn(30, width, generator=g)
    first = torch.randint(0, 30, (77,), generator=g)
    second = first.clone()
    second[1:] = torch.roll(first[1:], 8)  # the same words, eight places later
    p0 = positional + words[first]
    p1 = positional + words[second] + 0.3 * torch.randn(77, width, generator=g)
    return p0, p1


def test_aligned_morph_stays_closer_to_the_source_than_plain_slerp():
    p0, p1 = realistic_pair()
    plain = slerp(p0, p1, 0.5)
    aligned = slerp(p0, align(p0, p1, 4), 0.5)
    cos = torch.nn.functional.cosine_similarity
    assert cos(aligned, p0, dim=-1).mean() > cos(plain, p0, dim=-1).mean() + 0.05
