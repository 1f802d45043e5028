"""train refuses, before any work (no --out made, nothing in it removed), a tokenizer or base model that does not
fit, and an --out that holds its inputs; it removes only the copies a killed vipe run left; a restart, a resume
and a rerun never leave a result or a best/ that disagree."""

from __future__ import annotations

import json
import random
import shutil
import zipfile

import pytest
import torch

from vipe_core.cli import main
from vipe_core.guards import LOCK_FILE
from vipe_core.records import mark_copy
from vipe_core.resume import SAVING, recover_last

from .helpers import refused
from .test_vipe_leftovers import _listed
from .test_vipe_train_guards import train_args


@pytest.fixture(scope="module")
def finished(tmp_path_factory, tiny_base, canvas_parquet):
    """A finished one-epoch run: an --out with best/, last/ and train_result.json."""
    out = tmp_path_factory.mktemp("finished") / "ckpt"
    assert main(train_args(canvas_parquet, tiny_base, out, "--save-every", "3")) == 0
    return out


def _refused_before_work(argv: list[str], out, capsys) -> str:
    line = refused(argv, capsys)
    assert not out.exists(), "the run made --out before refusing"
    return line


def _base_copy(tiny_base, tmp_path, name: str = "base"):
    base = tmp_path / name
    shutil.copytree(tiny_base, base)
    return base


def test_a_folder_without_tokenizer_files_is_refused(tmp_path, tiny_base, canvas_parquet, capsys, no_work, monkeypatch):
    bare = _base_copy(tiny_base, tmp_path)
    for tokenizer_file in bare.glob("*"):
        if tokenizer_file.name not in ("config.json", "generation_config.json", "model.safetensors"):
            tokenizer_file.unlink()
    out = tmp_path / "o"
    line = _refused_before_work(train_args(canvas_parquet, bare, out), out, capsys)
    assert "holds no tokenizer.json, nor vocab.json and merges.txt" in line and "--tokenizer" in line
    line = _refused_before_work(train_args(canvas_parquet, tiny_base, out, "--tokenizer", str(bare)), out, capsys)
    assert line.startswith(f"vipe train: the tokenizer {bare} holds no tokenizer.json")
    (notes := tmp_path / "notes.txt").write_text("hi")  # (transformers looked it up on the hub, as a config)
    line = _refused_before_work(train_args(canvas_parquet, tiny_base, out, "--tokenizer", str(notes)), out, capsys)
    assert line == f"vipe train: the tokenizer {notes} is a file: give a tokenizer's folder, or a hub name."
    monkeypatch.chdir(tiny_base)  # the tokenizer's own file, named as a hub name could be
    line = _refused_before_work(
        train_args(canvas_parquet, tiny_base, out, "--tokenizer", "tokenizer.json"), out, capsys
    )
    assert line.endswith("the tokenizer tokenizer.json is a file: give a tokenizer's folder, or a hub name.")
    line = _refused_before_work(train_args(canvas_parquet, "", out), out, capsys)  # (was "the base model  is")
    assert line.startswith("vipe train: the base model is empty: give a model's folder")


def test_a_tokenizer_that_does_not_fit_the_base_is_refused(tmp_path, tiny_base, canvas_parquet, capsys, no_work):
    from transformers import AutoTokenizer

    larger = AutoTokenizer.from_pretrained(tiny_base)
    larger.add_tokens([f"zz{i}" for i in range(50)])
    larger.save_pretrained(tmp_path / "larger")
    shifted = tmp_path / "shifted"  # every id past the model's vocabulary (an IndexError mid-training before)
    shifted.mkdir()
    spec = json.loads((tiny_base / "tokenizer.json").read_text())
    spec["model"]["vocab"] = {token: i + 2000 for token, i in spec["model"]["vocab"].items()}
    for added in spec["added_tokens"]:
        added["id"] += 2000
    (shifted / "tokenizer.json").write_text(json.dumps(spec))
    shutil.copy(tiny_base / "tokenizer_config.json", shifted)
    out = tmp_path / "o"
    for tokenizer in (tmp_path / "larger", shifted):
        line = _refused_before_work(
            train_args(canvas_parquet, tiny_base, out, "--tokenizer", str(tokenizer)), out, capsys
        )
        assert f"does not match the base model '{tiny_base}'" in line


def test_a_base_that_is_no_causal_lm_is_refused(tmp_path, tiny_base, canvas_parquet, capsys, no_work):
    from transformers import AutoTokenizer, BertConfig, BertModel

    tokenizer = AutoTokenizer.from_pretrained(tiny_base)
    config = BertConfig(vocab_size=len(tokenizer), hidden_size=32, num_hidden_layers=1, num_attention_heads=2)
    BertModel(config).save_pretrained(tmp_path / "bert")
    tokenizer.save_pretrained(tmp_path / "bert")
    out = tmp_path / "o"
    line = _refused_before_work(train_args(canvas_parquet, tmp_path / "bert", out), out, capsys)
    assert "is a BertModel, not a causal language model" in line


def test_an_out_holding_an_input_or_a_long_max_length_is_refused(tmp_path, tiny_base, canvas_parquet, capsys, no_work):
    data = tmp_path / "lc.parquet"
    shutil.copy(canvas_parquet, data)
    assert f"--out {tmp_path} holds the LyricCanvas file" in refused(train_args(data, tiny_base, tmp_path), capsys)
    assert not (tmp_path / LOCK_FILE).exists()
    out = tmp_path / "o"
    line = _refused_before_work(train_args(data, tiny_base, out, "--max-length", "100000"), out, capsys)
    assert "--max-length 100000 is more than the base model" in line


def _config_of(base, **changes) -> None:
    config = json.loads((base / "config.json").read_text())
    (base / "config.json").write_text(json.dumps({**config, **changes}))


def _junk_weights(base) -> None:
    (base / "model.safetensors").unlink()
    (base / "pytorch_model.bin").write_bytes(b"junk\n")


def _random_bin(base) -> None:
    _junk_weights(base)
    (base / "pytorch_model.bin").write_bytes(random.Random(5).randbytes(5000))  # (torch's weights-only unpickler)


def _folder_as_weights(base) -> None:
    (base / "model.safetensors").unlink()
    (base / "model.safetensors").mkdir()


def _index_not_json(base) -> None:
    (base / "model.safetensors").rename(base / "model-00001-of-00001.safetensors")
    (base / "model.safetensors.index.json").write_text("{not json")


@pytest.mark.parametrize(
    "damage, said",
    [
        (lambda base: _config_of(base, n_embd=32), "(its weights do not have the sizes its config.json gives)."),
        (lambda base: _config_of(base, n_embd="sixty"), "field 'n_embd': TypeError: Field 'n_embd' expected int"),
        (lambda base: (base / "model.safetensors").unlink(), "holds no weights: give a folder with model.safetensors"),
        (_junk_weights, "(one of its files is not what its name says: KeyError 174812789)."),
        (lambda base: _junk_weights(base) or (base / "pytorch_model.bin").write_bytes(b""), "says: EOFError)."),
        (lambda base: _config_of(base, n_layer=3), "incomplete: its weights hold no transformer.h.2.attn.c_attn.bias"),
        (_random_bin, "(its pytorch_model.bin is no PyTorch save of weights alone, as torch.save writes them)."),
        (_folder_as_weights, "is damaged: model.safetensors is not a file."),
        (_index_not_json, "its model.safetensors.index.json is not JSON."),
    ],
)
def test_base_weights_that_do_not_fit_are_refused_before_out_is_made(
    damage, said, tmp_path, tiny_base, canvas_parquet, capsys
):
    base = _base_copy(tiny_base, tmp_path)
    damage(base)
    out = tmp_path / "out"
    assert said in _refused_before_work(train_args(canvas_parquet, base, out), out, capsys)


def _copy_of_a_killed_save(folder) -> None:
    folder.mkdir()
    mark_copy(folder)  # the first file a run writes there
    (folder / "config.json").write_text("{}")
    (folder / "model.safetensors").write_bytes(b"cut")


def test_only_the_copies_a_vipe_run_left_are_removed(tmp_path):
    mine = tmp_path / ".best.settings"  # a person's: a file vipe never writes there
    mine.mkdir()
    (mine / "config").write_text("precious")
    _copy_of_a_killed_save(tmp_path / ".best.abcd1234")
    recover_last(tmp_path, used=False)  # a folder no vipe run used: nothing there is taken for vipe's
    assert (tmp_path / ".best.abcd1234").is_dir()
    recover_last(tmp_path, used=True)
    assert sorted(p.name for p in tmp_path.iterdir()) == [".best.settings"]
    assert (mine / "config").read_text() == "precious"


def test_a_refused_run_removes_nothing(tmp_path, tiny_base, canvas_parquet, capsys, no_work):
    out = tmp_path / "person"
    for name in (".best.settings", ".last.old.sessions", SAVING):
        (out / name).mkdir(parents=True)
        (out / name / "config").write_text("precious")
    line = refused(train_args(canvas_parquet, tiny_base, out, "--tokenizer", str(tmp_path / "missing")), capsys)
    assert "missing is not there: give a tokenizer's folder" in line
    line = refused(train_args(canvas_parquet, tiny_base, out), capsys)
    assert f"{out / SAVING} is not vipe's" in line
    assert sorted(p.name for p in out.iterdir()) == [".best.settings", ".last.old.sessions", SAVING]
    assert all((folder / "config").read_text() == "precious" for folder in out.iterdir())


def test_a_damaged_random_state_or_best_is_refused(finished, tmp_path, tiny_base, canvas_parquet, capsys, no_work):
    out = tmp_path / "ckpt"
    shutil.copytree(finished, out)
    (out / "last" / "random_states_0.pkl").write_bytes(bytes(range(256)) * 8)
    line = refused(train_args(canvas_parquet, tiny_base, out), capsys)
    assert "last is damaged (random_states_0.pkl is cut short" in line
    torch.save({"random_state": 1}, out / "last" / "random_states_0.pkl")  # (accelerate resumed without it: no word)
    line = refused(train_args(canvas_parquet, tiny_base, out), capsys)
    assert "random_states_0.pkl holds no random states as accelerate saves them" in line
    shutil.rmtree(out)
    shutil.copytree(finished, out)  # bytes changed inside the archive, its directory whole: its CRC tells
    archive = out / "last" / "optimizer.bin"
    with zipfile.ZipFile(archive) as opened:
        member = max(opened.infolist(), key=lambda info: info.file_size)
    data = bytearray(archive.read_bytes())
    head = member.header_offset  # its data follows the local header: 30 bytes, its name and its extra field
    at = head + 30 + sum(int.from_bytes(data[k : k + 2], "little") for k in (head + 26, head + 28))
    data[at : at + 16] = bytes(b ^ 0xFF for b in data[at : at + 16])
    archive.write_bytes(bytes(data))
    assert "last is damaged (optimizer.bin is cut short, damaged" in refused(
        train_args(canvas_parquet, tiny_base, out), capsys
    )
    shutil.rmtree(out)
    shutil.copytree(finished, out)
    weights = out / "best" / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:100])
    assert f"{out / 'best'} is damaged (model.safetensors" in refused(
        train_args(canvas_parquet, tiny_base, out), capsys
    )


def test_a_rerun_of_a_finished_run_says_so(finished, tmp_path, tiny_base, canvas_parquet, capsys, one_thread):
    out = tmp_path / "ckpt"
    shutil.copytree(finished, out)
    mine = [out / ".best.20261201", out / ".last.old.20261130"]  # a person's dated copies: vipe's files only
    for checkpoint, copy in zip(("best", "last"), mine):
        shutil.copytree(out / checkpoint, copy)
    capsys.readouterr()
    assert main(train_args(canvas_parquet, tiny_base, out)) == 0
    printed = capsys.readouterr().out
    assert f"the run in {out} is already finished (step 6)" in printed and "resuming" not in printed
    assert main(train_args(canvas_parquet, f"{tiny_base}/", out)) == 0  # its base written another way: one folder
    assert "already finished" in capsys.readouterr().out
    assert json.loads((out / "train_result.json").read_text())["best"] == str(out / "best")
    assert all(_listed(copy) == _listed(out / checkpoint) for checkpoint, copy in zip(("best", "last"), mine))


def test_a_restart_retires_the_old_result_and_state_first(finished, tmp_path, tiny_base, canvas_parquet, monkeypatch):
    out = tmp_path / "ckpt"
    shutil.copytree(finished, out)

    def killed(*args, **kwargs):
        raise KeyboardInterrupt  # as a run killed before its first save would stop

    monkeypatch.setattr("vipe_core.train.prepare", killed)
    assert main(train_args(canvas_parquet, tiny_base, out, "--lr", "1e-4", "--restart")) == 130
    assert not (out / "train_result.json").exists() and not (out / "last").exists()
    assert (out / "best" / "vipe_training.json").is_file()  # replaced by the new run's first evaluation


def test_a_context_longer_than_the_tokenizer_reads_is_cut_without_transformers_warning(tiny_base, capfd):
    from transformers import AutoTokenizer

    from vipe_core.train import encode_example

    tokenizer = AutoTokenizer.from_pretrained(tiny_base)
    tokenizer.model_max_length = 32  # (a tokenizer's limit below what the context holds, as GPT-2's 1024 is)
    ids, prompt = encode_example(tokenizer, "word " * 300, "an elaboration", 64)
    assert len(ids) == 64 and prompt < 64 and "Token indices" not in capfd.readouterr().err


def test_a_run_folder_given_as_the_base_is_told_to_give_its_best(finished, tmp_path, canvas_parquet, capsys, no_work):
    out = tmp_path / "out"
    said = _refused_before_work(train_args(canvas_parquet, str(finished), out), out, capsys)
    assert f"the base model {finished} is a `vipe train` run's folder: give its checkpoint, {finished / 'best'}" in said
    said = _refused_before_work(train_args(canvas_parquet, str(finished / "last"), out), out, capsys)
    assert "holds no config.json: give a model's folder" in said


def test_a_base_of_weights_that_are_no_numbers_is_refused_before_out(tmp_path, tiny_base, canvas_parquet, capsys):
    from safetensors.torch import load_file, save_file

    base = shutil.copytree(tiny_base, tmp_path / "base")
    tensors = load_file(base / "model.safetensors")
    save_file({name: torch.full_like(t, float("nan")) for name, t in tensors.items()}, base / "model.safetensors")
    said = refused(train_args(canvas_parquet, base, tmp_path / "run"), capsys)
    assert "holds weights that are no finite numbers (NaN or infinite)" in said and not (tmp_path / "run").exists()


def test_a_librarys_message_is_told_by_its_first_line_and_the_one_its_colon_leads_to():
    from vipe_core.resume import reason

    cases = {"x:\n\nmore": "x: more", "a: \nb": "a: b", "plain\nrest": "plain", "": "Exception"}
    assert {message: reason(Exception(message)) for message in cases} == cases
