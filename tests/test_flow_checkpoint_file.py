"""`--diffusion model.safetensors` for the flow-matching families: a Z-Image or FLUX.2 klein transformer file (what
a model site gives) drawn with its repository's text encoder and VAE, the family read from the file's header, and
a file that would not fit that repository refused in one sentence before any work."""

from __future__ import annotations

import pytest
import torch
from safetensors.torch import save_file

from musicvid.core.errors import UserError
from musicvid.models.choose import choose_models
from musicvid.models.drawing import Drawing
from musicvid.models.loading import load_diffusion
from musicvid.models.precision import Precision
from musicvid.settings.presets import FAMILIES, KLEIN, TINY_KLEIN, ZIMAGE
from tests.standins.transformer_files import transformer_file

pytestmark = pytest.mark.slow
CPU = torch.device("cpu")
BF16 = Precision.resolve("bfloat16", CPU)


# klein's in its authors' layout under ComfyUI's prefix (round 12: diffusers' converter read the prefix as a block's
# number, after the storyboard)
@pytest.mark.parametrize(
    "family, repository, bfl", [("zimage", ZIMAGE, False), ("klein", KLEIN, False), ("klein", KLEIN, True)]
)
def test_a_transformer_file_draws_with_its_repositorys_text_encoder_and_vae(
    standin_hub, tmp_path, family, repository, bfl
):
    file = tmp_path / f"{family}-finetune.safetensors"
    file.write_bytes(transformer_file(family, changed=True, bfl=bfl))
    chosen = choose_models("default", diffusion=str(file))  # the family's steps and guidance come with it
    assert (chosen.steps, chosen.guidance, chosen.size) == (
        FAMILIES[family].steps,
        FAMILIES[family].guidance,
        (1024,) * 2,
    )
    from_file, from_repository = load_diffusion(str(file), CPU, BF16), load_diffusion(repository, CPU, BF16)
    assert type(from_file) is type(from_repository)
    dtypes = {p.dtype for name in ("transformer", "text_encoder", "vae") for p in getattr(from_file, name).parameters()}
    assert dtypes == {torch.bfloat16}
    for name in ("text_encoder", "vae"):  # the repository's own
        mine, theirs = getattr(from_file, name).state_dict(), getattr(from_repository, name).state_dict()
        assert all(torch.equal(mine[k], theirs[k]) for k in theirs)
    # the file's transformer: the repository's weights nudged, every one of them read from the file
    mine, theirs = from_file.transformer.state_dict(), from_repository.transformer.state_dict()
    assert mine.keys() == theirs.keys()
    assert all(torch.allclose(mine[k].float(), theirs[k].float() + 0.25, atol=0.01) for k in theirs)
    # keyed by what it holds: a copy under another name is the same model, another fine-tune is not
    copy = tmp_path / "renamed.safetensors"
    copy.write_bytes(file.read_bytes())
    (other := tmp_path / "other.safetensors").write_bytes(transformer_file(family))

    def key(path):
        return Drawing().key(
            choose_models("default", diffusion=str(path)), Precision.resolve("auto", torch.device("cpu"))
        )

    assert key(file) == key(copy) != key(other)


def test_a_transformer_file_of_other_sizes_than_the_repositorys_is_refused_naming_them(standin_hub, tmp_path):
    from musicvid.models.tiny_flow import tiny_klein

    state = tiny_klein().transformer.state_dict()
    state = {k: v for k, v in state.items() if not k.startswith("single_transformer_blocks.")}  # no single blocks
    save_file({k: v.contiguous() for k, v in state.items()}, tmp_path / "klein-9b.safetensors")
    with pytest.raises(UserError, match=f"other sizes than {KLEIN}'s.*num_single_layers 0 where it has 1"):
        choose_models("default", diffusion=str(tmp_path / "klein-9b.safetensors"))
    # twice as wide, its text and blocks the same (round 12: its load failed after the storyboard)
    from diffusers import Flux2Transformer2DModel

    from musicvid.models.tiny_flow import TINY_FLOW

    wide = Flux2Transformer2DModel(**{**TINY_FLOW[TINY_KLEIN]["transformer"], "num_attention_heads": 4})
    save_file({k: v.contiguous() for k, v in wide.state_dict().items()}, tmp_path / "wide.safetensors")
    with pytest.raises(UserError, match=r"\(num_attention_heads × attention_head_dim 64 where it has 32\)$"):
        choose_models("default", diffusion=str(tmp_path / "wide.safetensors"))
    # without its text's projection into it (a file cut down): said, not a StopIteration or a KeyError
    without = {k: v.contiguous() for k, v in state.items() if not k.startswith("context_embedder.")}
    save_file(without, tmp_path / "cut.safetensors")
    with pytest.raises(
        UserError, match="cut.safetensors holds no txt_in.weight nor context_embedder.weight: not a whole"
    ):
        choose_models("default", diffusion=str(tmp_path / "cut.safetensors"))
    # diffusers' own names under the authors' prefix (model.diffusion_model.): diffusers would load nothing of them
    prefixed = {f"model.diffusion_model.{k}": v.contiguous() for k, v in tiny_klein().transformer.state_dict().items()}
    save_file(prefixed, tmp_path / "prefixed.safetensors")
    with pytest.raises(UserError, match="holds diffusers' names under model.diffusion_model., which diffusers loads"):
        choose_models("default", diffusion=str(tmp_path / "prefixed.safetensors"))
