"""What --candidates costs: ViPE on a 40-line song, one elaboration per scene against twenty.

    python -m benchmarks.elaborate              # GPT-2 Medium's architecture (ViPE-M), N = 1 and 20
    python -m benchmarks.elaborate --quick      # a tiny model: checks the script still works

The model has ViPE-M's architecture and GPT-2's real vocabulary with random weights (compute does not
depend on the weights' values); its end-of-text embedding is shrunk so that every elaboration runs to
the full 50 new tokens, the most a real one costs. Sampling and choosing are timed apart. Writes JSON
(default benchmarks/results/elaborate-<device>.json) and prints a markdown table.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import torch

from benchmarks.what_ran import machine, models_ran
from musicvid.core.assets import ASSETS_DIR
from musicvid.models.loading import resolve_device
from musicvid.storyboard.board import Scene, SongAudio, Storyboard
from musicvid.storyboard.elaborate import scene_contexts
from vipe_core.atomic import write_text
from vipe_core.choose import choose
from vipe_core.inference import ViPE

MEDIUM = dict(n_embd=1024, n_layer=24, n_head=16)
TINY = dict(n_embd=32, n_layer=2, n_head=2)


def song(lines: int) -> Storyboard:
    corpus = [line for line in (ASSETS_DIR / "texts" / "tiny_corpus.txt").read_text().splitlines() if line.strip()]
    scenes = [Scene(i, "lyric", float(i), float(i + 1), corpus[i % len(corpus)]) for i in range(lines)]
    return Storyboard(SongAudio(float(lines)), "Benchmark", "Random Weights", scenes=scenes)


def load(sizes: dict, device: torch.device) -> ViPE:
    from transformers import GPT2Config, GPT2LMHeadModel

    from tests.fixtures.gpt2 import GPT2_EOS, GPT2_VOCAB, load_tokenizer, tokenizer_files

    tokenizer = load_tokenizer(tokenizer_files())
    torch.manual_seed(0)
    model = GPT2LMHeadModel(GPT2Config(vocab_size=GPT2_VOCAB, bos_token_id=GPT2_EOS, eos_token_id=GPT2_EOS, **sizes))
    with torch.no_grad():
        model.transformer.wte.weight[GPT2_EOS] *= 0.01
    dtype = torch.float16 if device.type == "cuda" else torch.float32
    return ViPE(model.to(device, dtype), tokenizer)


def measure(vipe: ViPE, board: Storyboard, candidates: int, batch_size: int) -> dict:
    contexts = scene_contexts(board, 7)
    started = time.perf_counter()
    sampled = vipe.sample(contexts, candidates=candidates, seed=0, batch_size=batch_size)
    if vipe.device.type == "cuda":
        torch.cuda.synchronize()
    sampling = time.perf_counter() - started
    started = time.perf_counter()
    if candidates > 1:
        [choose(texts, line=s.text, context=c) for s, texts, c in zip(board.scenes, sampled, contexts)]
    choosing = time.perf_counter() - started
    tokens = sum(len(vipe.tokenizer(t)["input_ids"]) for texts in sampled for t in texts)
    return {
        "candidates": candidates,
        "batch_size": batch_size,
        "sample_s": round(sampling, 2),
        "choose_s": round(choosing, 3),
        "new_tokens": tokens,
        "scenes": len(contexts),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a tiny model and a 4-line song")
    parser.add_argument("--lines", type=int, default=40)
    parser.add_argument("--candidates", type=int, nargs="+", default=[1, 20])
    parser.add_argument("--batch-size", type=int, default=16, help="sequences per generate call")
    parser.add_argument("--device", default="auto")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    device = resolve_device(args.device)
    vipe = load(TINY if args.quick else MEDIUM, device)
    board = song(4 if args.quick else args.lines)
    started = time.perf_counter()
    choose(["a red door"])  # loads the norms once per process; not part of each choice
    norms_s = round(time.perf_counter() - started, 2)
    rows = [measure(vipe, board, n, args.batch_size) for n in ([1, 2] if args.quick else args.candidates)]
    result = {
        "model": "tiny GPT-2" if args.quick else "GPT-2 Medium architecture (ViPE-M), random weights",
        "machine": machine(device),
        "ran": models_ran(vipe=vipe),
        "load_norms_s": norms_s,
        "rows": rows,
    }
    name = f"elaborate-{'quick' if args.quick else device.type}.json"
    out = args.out or Path(__file__).resolve().parent / "results" / name
    write_text(out, json.dumps(result, indent=2, allow_nan=False) + "\n")
    print(
        f"| candidates | sample s | choose s | s per scene | new tokens |  ({result['model']}, "
        f"{result['machine']['device']})"
    )
    print("|---:|---:|---:|---:|---:|")
    for r in rows:
        print(
            f"| {r['candidates']} | {r['sample_s']} | {r['choose_s']} | "
            f"{(r['sample_s'] + r['choose_s']) / r['scenes']:.2f} | {r['new_tokens']} |"
        )
    print(f"loading the norms for choosing: {norms_s} s once per process; written to {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
