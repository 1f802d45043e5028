"""Elaboration: several candidates per scene, the choice among them (and its lenses), and no silent
fallback to the literal lyrics."""

import json
from dataclasses import replace

import pytest
import torch

from musicvid.cli import main
from musicvid.core.errors import RenderError
from musicvid.models.tiny import tiny_gpt2_tokenizer, tiny_vipe
from musicvid.storyboard.board import Scene, SongAudio, Storyboard, load_storyboard
from musicvid.storyboard.elaborate import elaborate, scene_contexts
from musicvid.storyboard.table import fallback_note, scene_table
from vipe_core.choose import choose

LINE = "my heart is a lighthouse in the storm"
CONTEXT = "Lighthouse by The Tiny Models; we sailed across the sea ; my heart is a lighthouse in the storm"
CANDIDATES = [
    "a tall lighthouse in a violent storm at night, waves crashing on the rocks",
    "a woman holding a lantern on a rocky shore, guiding a small boat home through the rain",
    "a woman crying, her chest aching with love and fear, tears of hope on her face",
    "the concept of hope and guidance, an idea of faith and inner strength",
]


def test_the_most_concrete_candidate_is_kept_and_each_lens_picks_its_reading():
    pick = {
        lens: CANDIDATES.index(choose(CANDIDATES, line=LINE, context=CONTEXT, lens=lens))
        for lens in (None, "literal", "figurative", "emotional", "abstract")
    }
    assert pick == {None: 0, "literal": 0, "figurative": 1, "emotional": 2, "abstract": 3}
    # background: what the song around the line says (it sailed across the sea)
    sea = "a wooden sailing ship on the open sea under a full moon"
    assert choose([*CANDIDATES, sea], line=LINE, context=CONTEXT, lens="background") == sea
    assert choose([*CANDIDATES, sea], line=LINE, context=CONTEXT, lens="literal") == CANDIDATES[0]
    # plurals are rated by their lemma; empty candidates are never chosen
    assert choose(["", "stars and shadows over the waves", "ideas"]) == "stars and shadows over the waves"
    assert choose(["", " "]) == ""


def storyboard(lines):
    scenes = [Scene(i, "lyric", float(i), float(i + 1), line) for i, line in enumerate(lines)]
    return Storyboard(SongAudio(float(len(lines))), "Song", "Band", scenes=scenes)


def test_candidates_and_the_choice_are_the_same_for_the_same_seed():
    vipe = tiny_vipe()
    lines = ["the morning sun is rising", "we are walking down an empty road", "my heart is beating like a drum"]
    sampled = vipe.sample(scene_contexts(storyboard(lines), 7), candidates=5, seed=3)
    assert [len(c) for c in sampled] == [5, 5, 5] and len(set(sampled[0])) == 5
    prompts = []
    for seed in (3, 3, 4):
        board = storyboard(lines)
        board = elaborate(board, vipe, context_size=7, seed=seed, prompt_candidates=5, lens="emotional")
        prompts.append([s.prompt for s in board.scenes])
    assert prompts[0] == prompts[1] != prompts[2]
    assert all(prompt in texts for prompt, texts in zip(prompts[0], sampled))  # chosen among ViPE's candidates


@pytest.mark.slow
def test_a_model_that_gives_nothing_is_an_error_not_a_lyric_video(demo_song, demo_lyrics, tmp_path, capsys):
    from transformers import GPT2Config, GPT2LMHeadModel

    # a GPT-2 whose every next token is end-of-text: each elaboration comes out empty
    tokenizer = tiny_gpt2_tokenizer()
    eos = tokenizer.eos_token_id
    model = GPT2LMHeadModel(
        GPT2Config(vocab_size=len(tokenizer), n_embd=32, n_layer=1, n_head=2, bos_token_id=eos, eos_token_id=eos)
    )
    with torch.no_grad():
        model.transformer.ln_f.weight.zero_()
        end = model.transformer.wte.weight[eos]
        model.transformer.ln_f.bias.copy_(50 * end / end.dot(end))  # end-of-text's logit 50, the rest near 0
    model.save_pretrained(tmp_path / "silent")
    tokenizer.save_pretrained(tmp_path / "silent")
    capsys.readouterr()
    code = main(
        [
            "storyboard",
            str(demo_song),
            "--models",
            "tiny",
            "--vipe",
            str(tmp_path / "silent"),
            "--lyrics",
            str(demo_lyrics),
            "--workdir",
            str(tmp_path / "w"),
            "-q",
        ]
    )
    err = capsys.readouterr().err
    # one line (after the weights' loading bar, which only a fresh process's --quiet silences)
    assert code == 1 and "Traceback" not in err
    assert err.splitlines()[-1].startswith("musicvid: ViPE gave nothing usable for 10 of 10 scenes")
    assert not (tmp_path / "w" / "storyboard.json").exists()  # a rerun elaborates again
    with pytest.raises(RenderError):
        from vipe_core.inference import ViPE

        elaborate(storyboard(["one line"]), ViPE.from_pretrained(str(tmp_path / "silent")), context_size=7, seed=0)


def test_scenes_that_fell_back_are_recorded_and_marked(tmp_path):
    board = storyboard(["the first line", "the second line", "the third line"])
    prompts = ["a red door", "", "a field of wheat"]
    board = replace(
        board, scenes=[replace(s, prompt=p or s.text, fallback=not p) for s, p in zip(board.scenes, prompts)]
    )
    (tmp_path / "storyboard.json").write_text(board.text())
    again = load_storyboard(tmp_path / "storyboard.json")
    assert [s.fallback for s in again.scenes] == [False, True, False]
    table = scene_table(again).splitlines()
    assert table[2].split()[-4:] == ["!", "the", "second", "line"] and "!" not in table[1]
    assert table[-1].startswith("! 1 of 3 scenes kept their lyric as the prompt") and "(scenes 1)" in table[-1]
    assert "(rows 2)" in fallback_note(again, name="rows", first=1)


@pytest.mark.parametrize(
    "options, message",
    [
        (["--lens", "emotional"], "--lens chooses among several elaborations: add --candidates"),
        (["--candidates", "1000"], "--candidates must be from 1 to 64"),
        (["--candidates", "4", "--lens", "sideways"], "--lens must be one of"),
    ],
)
def test_candidate_settings_are_checked_before_any_work(options, message, demo_song, tmp_path, capsys):
    code = main(["storyboard", str(demo_song), "--models", "tiny", "--workdir", str(tmp_path / "w"), "-q", *options])
    err = capsys.readouterr().err
    assert code == 2 and message in err and err.count("\n") == 1
    assert not (tmp_path / "w").exists()


@pytest.mark.slow
def test_a_storyboard_made_before_candidates_existed_is_reused_with_its_edits(demo_song, demo_lyrics, tmp_path):
    argv = [
        "storyboard",
        str(demo_song),
        "--models",
        "tiny",
        "--lyrics",
        str(demo_lyrics),
        "--workdir",
        str(tmp_path / "w"),
        "-q",
    ]
    assert main(argv) == 0
    path = tmp_path / "w" / "storyboard.json"
    data = json.loads(path.read_text())
    del data["settings"]["candidates"], data["settings"]["lens"]  # as an earlier version wrote it
    data["scenes"][1]["prompt"] = "a lighthouse made of glass"
    path.write_text(json.dumps(data))
    assert main(argv) == 0
    assert load_storyboard(path).scenes[1].prompt == "a lighthouse made of glass"
    assert main([*argv, "--candidates", "3"]) == 0  # other settings: a new storyboard
    assert load_storyboard(path).scenes[1].prompt != "a lighthouse made of glass"
