#!/usr/bin/env python3
"""Build the two tiny tokenizers used to create small random models offline.

Both are byte-level BPE tokenizers trained on ``assets/texts/tiny_corpus.txt``
(using the HuggingFace ``tokenizers`` pipelines) and written in the *original*
file formats (``vocab.json`` + ``merges.txt``), so they load with the stock
``transformers`` classes without network access:

``tiny-gpt2/``
    GPT-2 format.  ids 0-255 are the 256 byte symbols (GPT-2's
    ``bytes_to_unicode`` order), then one id per learned merge, then
    ``<|endoftext|>`` as the last id (bos = eos = unk, like GPT-2).
    Load with ``GPT2TokenizerFast`` / ``AutoTokenizer``.

``tiny-clip/``
    CLIP format.  ids 0-255 are the byte symbols, 256-511 the same symbols with
    the ``</w>`` end-of-word suffix, then one id per learned merge, then
    ``<|startoftext|>`` and ``<|endoftext|>`` (CLIP's layout).  Text is
    lower-cased and split with CLIP's regex before BPE; model_max_length 77.
    Load with ``CLIPTokenizer`` / ``CLIPTokenizerFast`` / ``AutoTokenizer``.

How it is built: the ``tokenizers`` library provides the normalisation and
pre-tokenisation (exactly the pipelines ``transformers`` uses for GPT-2 and
CLIP), and the BPE model that the written files are checked with; the merges
themselves are learned by a small pure-Python BPE learner (same algorithm as
``tokenizers.trainers.BpeTrainer``).  The library trainer breaks ties between
equally frequent pairs by hash-map order, so its output changed from run to
run on this small corpus; the Python learner breaks ties by the pair's text,
so this script is fully deterministic.  Merges are ranked, so the first N of
them form a valid, self-consistent table; N is chosen to hit the vocabulary
size exactly.

Run::

    python assets/tokenizers/make_tokenizers.py [--corpus PATH] [--out DIR]
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers

HERE = Path(__file__).resolve().parent
DEFAULT_CORPUS = HERE.parent / "texts" / "tiny_corpus.txt"

GPT2_VOCAB_SIZE = 1536  # 256 bytes + 1279 merges + <|endoftext|>
CLIP_VOCAB_SIZE = 1536  # 512 (bytes, bytes</w>) + 1022 merges + 2 specials

EOT = "<|endoftext|>"
SOT = "<|startoftext|>"
EOW = "</w>"
CLIP_SPLIT = (
    r"""<\|startoftext\|>|<\|endoftext\|>|'s|'t|'re|'ve|'m|'ll|'d|"""
    r"""[\p{L}]+|[\p{N}]|[^\s\p{L}\p{N}]+"""
)


def bytes_to_unicode() -> list[str]:
    """GPT-2's reversible byte -> printable unicode mapping, in GPT-2 id order."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return [chr(c) for c in cs]


def read_corpus(path: Path) -> list[str]:
    lines = [ln.strip() for ln in path.read_text(encoding="utf-8").splitlines()]
    return [ln for ln in lines if ln]


def pretokenize(tok: Tokenizer, lines: list[str]) -> Counter:
    """Count the pre-tokenized (byte-level) words exactly as ``tok`` sees them."""
    counts: Counter = Counter()
    for line in lines:
        if tok.normalizer is not None:
            line = tok.normalizer.normalize_str(line)
        counts.update(w for w, _ in tok.pre_tokenizer.pre_tokenize_str(line))
    return counts


def learn_merges(
    word_counts: Counter, n_merges: int, suffix: str = "", min_frequency: int = 2
) -> list[tuple[str, str]]:
    """Classic BPE merge learning (Sennrich et al.) with deterministic ties.

    Same algorithm as ``tokenizers.trainers.BpeTrainer`` (symbols start as
    single byte-characters, the last one carrying ``suffix``; repeatedly merge
    the most frequent adjacent pair), but ties are broken by the pair's text
    instead of by hash-map order, so the output never changes between runs.
    """
    words = sorted(word_counts)  # fixed order
    freq = [word_counts[w] for w in words]
    syms = [list(w[:-1]) + [w[-1] + suffix] for w in words]

    pair_count: Counter = Counter()
    where: dict[tuple[str, str], set[int]] = {}
    for i, s in enumerate(syms):
        for p in zip(s, s[1:]):
            pair_count[p] += freq[i]
            where.setdefault(p, set()).add(i)

    merges: list[tuple[str, str]] = []
    while len(merges) < n_merges and pair_count:
        best = min(pair_count, key=lambda p: (-pair_count[p], p))
        if pair_count[best] < min_frequency:
            break
        merges.append(best)
        a, b = best
        for i in sorted(where.pop(best, ())):
            s = syms[i]
            for p in zip(s, s[1:]):  # remove old pairs
                pair_count[p] -= freq[i]
                if pair_count[p] <= 0:
                    del pair_count[p]
            out, j = [], 0
            while j < len(s):  # merge left to right
                if j + 1 < len(s) and s[j] == a and s[j + 1] == b:
                    out.append(a + b)
                    j += 2
                else:
                    out.append(s[j])
                    j += 1
            syms[i] = out
            for p in zip(out, out[1:]):  # add new pairs
                pair_count[p] += freq[i]
                where.setdefault(p, set()).add(i)
        pair_count.pop(best, None)
    return merges


def build_vocab(
    base: list[str], merges: list[tuple[str, str]], n_merge_tokens: int, specials: list[str]
) -> tuple[dict[str, int], list[tuple[str, str]]]:
    """base symbols, then merge results (first occurrence) until the size is met."""
    vocab: dict[str, int] = {s: i for i, s in enumerate(base)}
    kept: list[tuple[str, str]] = []
    added = 0
    for a, b in merges:
        if added == n_merge_tokens:
            break
        if a not in vocab or b not in vocab:  # cannot happen for a ranked list
            raise RuntimeError(f"merge {a!r} {b!r} uses unknown symbols")
        kept.append((a, b))
        if a + b not in vocab:
            vocab[a + b] = len(vocab)
            added += 1
    if added < n_merge_tokens:
        raise SystemExit(f"corpus too small: only {added} merges learned, need {n_merge_tokens}")
    for s in specials:
        vocab[s] = len(vocab)
    return vocab, kept


def write_json(path: Path, obj) -> None:
    path.write_text(json.dumps(obj, ensure_ascii=False, indent=None, separators=(",", ":")) + "\n", encoding="utf-8")


def write_pretty(path: Path, obj) -> None:
    path.write_text(json.dumps(obj, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")


def write_merges(path: Path, merges: list[tuple[str, str]]) -> None:
    text = "#version: 0.2\n" + "".join(f"{a} {b}\n" for a, b in merges)
    path.write_text(text, encoding="utf-8")


def check_roundtrip(tok: Tokenizer, out: Path, lines: list[str], suffix: str = "") -> float:
    """Load the written vocab/merges into ``tok``'s pipeline, check that every
    corpus line round-trips, and return the average number of tokens per line.
    (For CLIP the comparison ignores case and spacing, which CLIP normalises.)"""
    kwargs = {"end_of_word_suffix": suffix} if suffix else {}
    tok.model = models.BPE.from_file(str(out / "vocab.json"), str(out / "merges.txt"), **kwargs)
    total = 0
    for line in lines:
        ids = tok.encode(line, add_special_tokens=False).ids
        total += len(ids)
        text = tok.decode(ids)
        want = line
        if suffix:
            text = text.replace(suffix, " ").replace(" ", "")
            want = line.lower().replace(" ", "")
        if text != want:
            raise SystemExit(f"{out.name}: round-trip failed for {line!r} -> {text!r}")
    return total / len(lines)


# --------------------------------------------------------------------------


def make_gpt2(lines: list[str], out: Path) -> None:
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    # GPT-2 sees words mostly mid-sentence (" word"); also train on
    # space-prefixed lines so line-initial words get the common "Ġword" form.
    base = bytes_to_unicode()
    n_new = GPT2_VOCAB_SIZE - len(base) - 1
    words = pretokenize(tok, lines + [" " + ln for ln in lines])
    merges = learn_merges(words, n_merges=2 * n_new)
    vocab, kept = build_vocab(base, merges, n_new, [EOT])

    out.mkdir(parents=True, exist_ok=True)
    write_json(out / "vocab.json", vocab)
    write_merges(out / "merges.txt", kept)
    write_pretty(out / "special_tokens_map.json", {"bos_token": EOT, "eos_token": EOT, "unk_token": EOT})
    write_pretty(
        out / "tokenizer_config.json",
        {
            "tokenizer_class": "GPT2Tokenizer",
            "add_prefix_space": False,
            "add_bos_token": False,
            "bos_token": EOT,
            "eos_token": EOT,
            "unk_token": EOT,
            "errors": "replace",
            "model_max_length": 1024,
        },
    )
    avg = check_roundtrip(tok, out, lines)
    print(f"tiny-gpt2: {len(vocab)} tokens, {len(kept)} merges, {avg:.1f} tokens/line -> {out}")


def make_clip(lines: list[str], out: Path) -> None:
    tok = Tokenizer(models.BPE(end_of_word_suffix=EOW))
    # same normalisation / pre-tokenisation as transformers' CLIPTokenizer
    tok.normalizer = normalizers.Sequence(
        [normalizers.NFC(), normalizers.Replace(Regex(r"\s+"), " "), normalizers.Lowercase()]
    )
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(CLIP_SPLIT), behavior="removed", invert=True),
            pre_tokenizers.ByteLevel(add_prefix_space=False),
        ]
    )
    tok.decoder = decoders.ByteLevel()
    byte_syms = bytes_to_unicode()
    base = byte_syms + [s + EOW for s in byte_syms]
    n_new = CLIP_VOCAB_SIZE - len(base) - 2
    merges = learn_merges(pretokenize(tok, lines), n_merges=2 * n_new, suffix=EOW)
    vocab, kept = build_vocab(base, merges, n_new, [SOT, EOT])

    out.mkdir(parents=True, exist_ok=True)
    write_json(out / "vocab.json", vocab)
    write_merges(out / "merges.txt", kept)
    write_pretty(
        out / "special_tokens_map.json", {"bos_token": SOT, "eos_token": EOT, "unk_token": EOT, "pad_token": EOT}
    )
    write_pretty(
        out / "tokenizer_config.json",
        {
            "tokenizer_class": "CLIPTokenizer",
            "add_prefix_space": False,
            "do_lower_case": True,
            "bos_token": SOT,
            "eos_token": EOT,
            "unk_token": EOT,
            "pad_token": EOT,
            "errors": "replace",
            "model_max_length": 77,
        },
    )
    avg = check_roundtrip(tok, out, lines, suffix=EOW)
    print(f"tiny-clip: {len(vocab)} tokens, {len(kept)} merges, {avg:.1f} tokens/line -> {out}")


def main() -> None:
    ap = argparse.ArgumentParser(description="Build tiny-gpt2 and tiny-clip tokenizers.")
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("--out", type=Path, default=HERE, help="parent folder of the two tokenizers")
    args = ap.parse_args()
    lines = read_corpus(args.corpus)
    make_gpt2(lines, args.out / "tiny-gpt2")
    make_clip(lines, args.out / "tiny-clip")


if __name__ == "__main__":
    main()
