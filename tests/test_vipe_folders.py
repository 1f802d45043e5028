"""A ViPE folder (--vipe DIR) and its tokenizer, checked before any work against the model its config.json
describes (musicvid.models.vipe_files): weights that miss a layer, a shard or a tensor its index places, a config of
another model or of values no model has, and a tokenizer that is no tokenizer or does not fit, each refused in one
sentence before the song is read; transformers would have made up the missing tensors and said nothing. Each
damaged folder is one a probe of model folders made (notes: probes9, checkpoints no. 1 and 6)."""

import json
import shutil

import huggingface_hub.constants
import pytest

from musicvid.core.assets import TINY_GPT2_TOKENIZER, TINY_QWEN3_TOKENIZER
from musicvid.models.choose import choose_models
from musicvid.models.kinds import first_line
from tests.helpers import make_tone, quick, run
from tests.standins.hub import snapshot
from tests.test_model_checks import refused_before_the_work
from vipe_core.errors import VipeError
from vipe_core.guards import LOCK_FILE, hold_folder
from vipe_core.inference import read_tokenizer
from vipe_core.released import DEFAULT_VIPE, DEFAULT_VIPE_TOKENIZER
from vipe_core.train_config import TRAINING_INFO

SHARDS = ("model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors")


@pytest.fixture(scope="module")
def whole_vipe(tmp_path_factory):
    """A tiny ViPE as `vipe train` leaves one: its model and its tokenizer, saved by transformers."""
    from musicvid.models.tiny import tiny_vipe

    folder, vipe = tmp_path_factory.mktemp("vipe") / "vp", tiny_vipe()
    vipe.model.save_pretrained(folder)
    vipe.tokenizer.save_pretrained(folder)
    return folder


@pytest.fixture
def vipe(whole_vipe, tmp_path):
    return shutil.copytree(whole_vipe, tmp_path / "vipe")


@pytest.fixture
def song(tmp_path):
    return make_tone(tmp_path / "song.wav", 2)


def config_of(folder, **changes):
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**config, **changes}))


def without_layer_1(folder):
    from safetensors.torch import load_file, save_file

    tensors = load_file(folder / "model.safetensors")
    save_file({name: t for name, t in tensors.items() if ".h.1." not in name}, folder / "model.safetensors")


def four_layers(folder):
    config_of(folder, n_layer=4)


def shorter_positions(folder):
    config_of(folder, n_positions=128)


def short_window(folder):
    """A whole GPT-2 of 48 positions: fewer than the 50 tokens a prompt takes (round 10 found an OverflowError)."""
    from safetensors.torch import load_file, save_file

    weights = load_file(folder / "model.safetensors")
    weights["transformer.wpe.weight"] = weights["transformer.wpe.weight"][:48].clone()
    save_file(weights, folder / "model.safetensors", metadata={"format": "pt"})
    config_of(folder, n_positions=48)


def index(folder, placed):
    (folder / "model.safetensors.index.json").write_text(json.dumps({"metadata": {}, "weight_map": placed}))


def split(folder) -> list[str]:
    """The folder's weights in two shards, its layers in the second; their names, as an index lists them."""
    from safetensors.torch import load_file, save_file

    tensors = load_file(folder / "model.safetensors")
    (folder / "model.safetensors").unlink()
    for shard, of_layers in zip(SHARDS, (False, True)):
        save_file({name: t for name, t in tensors.items() if (".h." in name) == of_layers}, folder / shard)
    return sorted(tensors)


def sharded_all_in_the_first(folder):
    index(folder, {name: SHARDS[0] for name in split(folder)})  # the second is there, but never named


def sharded_second_missing(folder):
    index(folder, {name: SHARDS[".h." in name] for name in split(folder)})
    (folder / SHARDS[1]).unlink()


def llama_beside(folder, **sizes):
    (folder / "config.json").write_text(
        json.dumps({"model_type": "llama", "architectures": ["LlamaForCausalLM"], **sizes})
    )


def llama_of_its_size(folder):
    llama_beside(folder, hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=2)
    config_of(folder, vocab_size=1536, num_key_value_heads=2, eos_token_id=1535)


def llama_of_no_size(folder):
    llama_beside(folder)


def no_weights(folder):
    (folder / "model.safetensors").unlink()


def bert_not_a_decoder(folder):  # (a BERT trained as a "causal" head without is_decoder: it sees the answer)
    bert = {"model_type": "bert", "architectures": ["BertLMHeadModel"], "vocab_size": 1536, "hidden_size": 64}
    (folder / "config.json").write_text(json.dumps({**bert, "num_hidden_layers": 2, "num_attention_heads": 2}))


def weights_lead_nowhere(folder):
    (folder / "model.safetensors").unlink()
    (folder / "pytorch_model.bin").symlink_to(folder / "gone.bin")


def infinite_weight(folder):
    from safetensors.torch import load_file, save_file

    tensors = load_file(folder / "model.safetensors")
    tensors["transformer.h.1.mlp.c_fc.weight"][0, 0] = float("inf")
    save_file(tensors, folder / "model.safetensors")


def test_the_copy_a_vipe_train_run_was_saving_when_it_stopped_is_refused(capsys, tmp_path, song, vipe):
    (run := tmp_path / "run").mkdir()
    (run / LOCK_FILE).touch()
    copy = vipe.rename(run / ".best.abcdefgh")  # (its marker file, written last, not yet there)
    said = "is a copy a `vipe train` run makes while it saves a checkpoint: give its best/"
    refused_before_the_work(capsys, tmp_path, [*quick(song), "--vipe", copy], f"--vipe {copy}", said)


@pytest.mark.parametrize(
    "damage, said",
    [
        (without_layer_1, "its weights hold no transformer.h.1.* that its config.json's 2 layers need"),
        (four_layers, "hold no transformer.h.2.* or transformer.h.3.* that its config.json's 4 layers need"),
        (
            shorter_positions,
            "hold transformer.wpe.weight of 256 x 64, where the model its config.json describes has 128",
        ),
        (
            sharded_all_in_the_first,
            f"index.json places transformer.h.0.attn.c_attn.bias in {SHARDS[0]}, which does not",
        ),
        (sharded_second_missing, f"its model.safetensors.index.json names {SHARDS[1]}, which is not there"),
        (llama_of_its_size, "hold none of the tensors of the LlamaForCausalLM its config.json describes"),
        (llama_of_no_size, "describes a model of 6.7 billion parameters; ViPE is GPT-2 Medium or Large"),
        (lambda folder: config_of(folder, n_inner=10**17), "describes a model of over a billion billion parameters"),
        (lambda folder: config_of(folder, vocab_size="1536"), "Field 'vocab_size' expected int, got str"),
        (lambda folder: config_of(folder, n_layer=float("nan")), "its config.json's n_layer is nan, not a number"),
        (lambda folder: config_of(folder, n_embd=64.5), "Field 'n_embd' expected int, got float"),
        (no_weights, "holds no weights: give a folder with model.safetensors"),
        (bert_not_a_decoder, "is a BertLMHeadModel that reads both ways, not a causal language model"),
        (lambda folder: config_of(folder, n_layer=1), "its weights hold transformer.h.1.*, a layer the model its"),
        (lambda folder: config_of(folder, n_head=-2), "its config.json's n_head is -2, not a number a model can have"),
        (lambda folder: config_of(folder, layer_norm_epsilon=-1.0), "its config.json's layer_norm_epsilon is -1.0"),
        (lambda folder: config_of(folder, architectures="GPT2LMHeadModel"), "architectures is no list of class"),
        (weights_lead_nowhere, "its pytorch_model.bin is no file to read (a folder, a pipe, or a link that leads"),
        (short_window, "reads 48 tokens at most, and the prompt it writes takes 50 of them: it has no room"),
    ],
)
def test_a_vipe_folder_whose_weights_do_not_make_its_model_is_refused_before_any_work(
    capsys, tmp_path, song, vipe, damage, said
):
    damage(vipe)
    refused_before_the_work(capsys, tmp_path, [*quick(song), "--vipe", vipe], f"--vipe {vipe}", said)


def a_file(tmp_path):
    (file := tmp_path / "afile.txt").write_text("not a tokenizer")
    return file


def qwen_tokenizer(folder):
    (folder / "tokenizer.json").write_bytes((TINY_QWEN3_TOKENIZER / "tokenizer.json").read_bytes())


@pytest.mark.parametrize(
    "tokenizer, said",
    [
        (lambda tmp_path: tmp_path / "nope", "there is no such folder"),
        (lambda tmp_path: "./nope", "there is no such folder"),
        (lambda tmp_path: (tmp_path / "empty").mkdir() or tmp_path / "empty", "holds no tokenizer.json, nor vocab"),
        (a_file, "is a single file"),
        (lambda tmp_path: "someone/typo", "someone/typo is not in the model cache, and HF_HUB_OFFLINE keeps"),
        (lambda tmp_path: TINY_QWEN3_TOKENIZER, "does not match the ViPE model"),
    ],
)
def test_a_vipe_tokenizer_that_is_none_or_does_not_fit_is_refused_naming_it_before_any_work(
    capsys, tmp_path, song, vipe, tokenizer, said
):
    named = tokenizer(tmp_path)
    argv = [*quick(song), "--vipe", vipe, "--vipe-tokenizer", named]
    refused_before_the_work(capsys, tmp_path, argv, f"--vipe-tokenizer {named}", said)


def test_a_vipe_folders_own_tokenizer_or_the_one_it_takes_for_want_of_one_is_checked_before_any_work(
    capsys, tmp_path, song, vipe, monkeypatch
):
    qwen_tokenizer(vipe)
    argv = [*quick(song), "--vipe", vipe]
    said = "does not match the ViPE model", "(vocabulary 1536, end-of-text id 1535)"
    refused_before_the_work(capsys, tmp_path, argv, f"--vipe {vipe}'s own tokenizer (vocabulary", *said)
    for name in ("tokenizer.json", "tokenizer_config.json"):
        (vipe / name).unlink()
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path / "empty-hub"))
    refused_before_the_work(
        capsys,
        tmp_path,
        [*quick(song), "--vipe", vipe],
        f"takes for want of its own, {DEFAULT_VIPE_TOKENIZER}: {DEFAULT_VIPE_TOKENIZER} is not in the model cache",
    )


def test_a_whole_vipe_folder_and_the_released_vipe_by_hub_name_pass_the_checks(vipe, standin_hub):
    for tokenizer in (None, str(TINY_GPT2_TOKENIZER)):
        assert choose_models("tiny", vipe=str(vipe), vipe_tokenizer=tokenizer).vipe == str(vipe)
    # the stand-in of fittar/ViPE-M-CTX7: a pytorch_model.bin and no tokenizer, read with GPT-2 Medium's
    assert choose_models("tiny", vipe=DEFAULT_VIPE, vipe_tokenizer=DEFAULT_VIPE_TOKENIZER).vipe == DEFAULT_VIPE
    folder = str(snapshot(standin_hub, DEFAULT_VIPE))
    assert choose_models("tiny", vipe=folder).vipe_tokenizer is None


def test_a_tokenizer_folder_of_gpt2s_files_alone_is_read_as_gpt2s(vipe, standin_hub, tmp_path):
    """vocab.json and merges.txt, or tokenizer.json, without the tokenizer_config.json that names their class (as
    docs/models.md says a --vipe-tokenizer may be): read as GPT-2's, its end of text GPT-2's."""
    full = snapshot(standin_hub, DEFAULT_VIPE_TOKENIZER)
    for files in (("vocab.json", "merges.txt"), ("tokenizer.json",)):
        (alone := tmp_path / "+".join(files)).mkdir()
        for name in files:
            shutil.copy(full / name, alone / name)
        assert choose_models("tiny", vipe=DEFAULT_VIPE, vipe_tokenizer=str(alone)).vipe_tokenizer == str(alone)
        ours, theirs = read_tokenizer(str(alone)), read_tokenizer(str(full))
        assert ours("a light in the storm").input_ids == theirs("a light in the storm").input_ids
        assert ours.eos_token_id == theirs.eos_token_id is not None


def test_a_checkpoint_whose_training_still_runs_is_refused_before_any_work_and_taken_once_the_run_ends(
    capsys, tmp_path, song, whole_vipe
):
    run = tmp_path / "run"
    best = shutil.copytree(whole_vipe, run / "best")
    (best / TRAINING_INFO).write_text("{}")  # (what marks best/ as vipe train's)
    assert choose_models("tiny", vipe=str(best)).vipe == str(best)  # no run holds it
    assert not (run / LOCK_FILE).exists()  # the look at the run made no file in it
    with hold_folder(run):  # as `vipe train` holds its --out while it runs
        said = f"--vipe {best} is a checkpoint of the `vipe train` run in {run}, which is still running"
        refused_before_the_work(capsys, tmp_path, [*quick(song), "--vipe", best], said)
        with pytest.raises(VipeError, match="in use by another vipe run"), hold_folder(run):
            pass  # the run's hold is as it was
    assert choose_models("tiny", vipe=str(best)).vipe == str(best)  # the run ended (or was killed)
    with hold_folder(run):
        pass  # and the look let go of the lock: a run can start on the folder
    best.rename(run / ".best.old.abcdefgh")  # a run killed between a save's two renames: no best/ (not a hub name)
    said = f"--vipe {best} is not there: the `vipe train` run in {run} was stopped while it saved it; run that"
    refused_before_the_work(capsys, tmp_path, [*quick(song), "--vipe", best], said)


def test_an_error_that_announces_its_next_line_keeps_it():
    error = ValueError("Validation error for field 'n_layer':\n    TypeError: Field 'n_layer' expected int, got float")
    assert (
        first_line(error) == "Validation error for field 'n_layer': TypeError: Field 'n_layer' expected int, got float"
    )
    assert first_line(ValueError("one line\nand another")) == "one line"
    assert first_line(ValueError("")) == "ValueError"
    long = ValueError("Unable to load weights from checkpoint file for '/a/model.bin' at " + "/folder" * 40)
    assert first_line(long).endswith(" at …") and len(first_line(long)) < 170  # cut between words, not inside one
    whole = ValueError("x" * 155 + " word and more after it")  # a word ending at the cut is kept whole
    assert first_line(whole) == "x" * 155 + " word …"


def test_a_folders_generation_config_changes_nothing_of_how_vipe_samples(tmp_path):
    """generate would merge it in: beams, a penalty of 0 (which it refuses), once the storyboard is on its way."""
    from musicvid.models.tiny import tiny_vipe
    from vipe_core.inference import ViPE

    made = tiny_vipe()
    made.model.save_pretrained(folder := tmp_path / "vipe")
    made.tokenizer.save_pretrained(folder)
    contexts = ["a light in the storm", "my heart is a lighthouse"]
    authors = ViPE.from_pretrained(str(folder)).sample(contexts, candidates=2, seed=3)
    for saved in [{"num_beams": 0}, {"num_beams": 4, "num_beam_groups": 2}, {"repetition_penalty": 0.0}]:
        (folder / "generation_config.json").write_text(json.dumps({"eos_token_id": 0, **saved}))
        assert ViPE.from_pretrained(str(folder)).sample(contexts, candidates=2, seed=3) == authors, saved


def test_a_vipe_whose_weights_hold_an_infinity_is_refused_in_one_sentence_as_it_loads(capsys, tmp_path, song, vipe):
    infinite_weight(vipe)  # (no header shows it: sampling from it failed in torch's words, exit 1)
    code, out, err = run(capsys, *quick(song), "--vipe", vipe, "--workdir", tmp_path / "w", "-o", tmp_path / "v.mp4")
    assert code == 2 and err.strip().splitlines()[-1].startswith(f"musicvid: --vipe {vipe}: its weights"), err
    assert "its weights hold NaN or infinite values in float32 (transformer.h.1.mlp.c_fc.weight)" in err


def test_a_vipe_folder_checked_for_nan_as_it_loads_keeps_bfloat16_in_every_parameter(vipe, standin_hub):
    """The finite check reads the loaded weights: it must not cast them (a GPU runs ViPE in half precision)."""
    import torch

    from musicvid.models.loading import load_vipe
    from musicvid.models.precision import Precision

    cpu = torch.device("cpu")
    for name in (str(vipe), DEFAULT_VIPE):
        loaded = load_vipe(name, None, cpu, Precision.resolve("bfloat16", cpu))
        assert {(p.dtype, p.device.type) for p in loaded.model.parameters()} == {(torch.bfloat16, "cpu")}, name
