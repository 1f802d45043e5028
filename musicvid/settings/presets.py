"""Which models each stage uses: the one place that names the defaults.

`--models default|sdxl|zimage|klein|tiny|tiny-xl|tiny-zimage|tiny-klein` picks a preset; the per-model flags (`--asr`, `--asr-model`, `--vipe`, `--diffusion`,
`--separator`, `--upscaler`, `--fast-lora`, `--fast-decoder`, `--ip-adapter`, `--video-model`, and `musicvid score`'s
`--scorer`) override one model of it. The tiny preset names
small random models of the very classes the defaults use (musicvid.models.tiny): every stage then runs its
real code path on a CPU in seconds, with no download (the pictures are noise); sdxl and tiny-xl draw with SDXL,
zimage and tiny-zimage with Z-Image-Turbo, klein and tiny-klein with FLUX.2 klein.

The models that --fast and --reference add, and the size pictures are drawn at, are made for one family of
diffusion model (FAMILIES): naming an SDXL model with --diffusion brings SDXL's own, unless they are named too.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace

from vipe_core.released import DEFAULT_VIPE, DEFAULT_VIPE_TOKENIZER

TINY = "tiny-random"
TINY_XL = "tiny-random-xl"  # SDXL's classes (two text encoders, time-and-size conditioning), as small
# Stable Diffusion 1.5's and SDXL's architectures with random weights: what rendering costs, with no download
# (compute does not depend on the weights' values). For benchmarks and memory checks.
SD15_RANDOM = "sd15-random"
SDXL_RANDOM = "sdxl-random"
SD15 = "stable-diffusion-v1-5/stable-diffusion-v1-5"
SDXL = "stabilityai/stable-diffusion-xl-base-1.0"
# The flow-matching picture families (issue: today's picture models): Z-Image-Turbo (6B transformer, Qwen3-4B
# text encoder, 8 steps without guidance) and FLUX.2 klein 4B (distilled to 4 steps, Apache-2.0), and the tiny
# random pipelines of their classes (musicvid.models.tiny_flow)
ZIMAGE = "Tongyi-MAI/Z-Image-Turbo"
KLEIN = "black-forest-labs/FLUX.2-klein-4B"
TINY_ZIMAGE = "tiny-random-zimage"
TINY_KLEIN = "tiny-random-klein"
ASR_BACKENDS = ("openai-whisper", "faster-whisper")
# --precision: the models' dtype (musicvid.models.precision resolves each one's for the device)
PRECISIONS = ("auto", "float32", "float16", "bfloat16")
# Whisper large-v2, on purpose: it is the large model of the paper's time, and large-v3 (what a bare
# "large" means today) loops and hallucinates far more over music and silence (whisper.cpp #1507,
# faster-whisper #777), which is most of a song.
WHISPER_LARGE = "large-v2"
# Demucs' hybrid transformer model, the practitioners' standard for taking the singing from the band.
DEMUCS = "htdemucs"
# Real-ESRGAN x4plus as its authors published it (on GitHub), mirrored as a file on the hub. "auto", every
# preset's upscaler, takes the preset's network (this one, or the tiny random one) on a GPU and Lanczos on
# the CPU, where Real-ESRGAN costs 100 s a 1080p frame on two cores (docs/frames.md).
REAL_ESRGAN = "2kpr/Real-ESRGAN/RealESRGAN_x4plus.pth"
# With --fast, auto takes Real-ESRGAN's general x4v3 (a Compact network of 32 convolutions, mirrored on the hub):
# on an H200 it upscales a 1080p frame in a twelfth of x4plus's time, which beside the drawing was most of a
# 3-minute song's (docs/benchmarks.md); --fast already trades picture detail for speed (TAESD's decoding).
REAL_ESRGAN_FAST = "ai-forever/Real-ESRGAN/realesr-general-x4v3.pth"
AUTO_UPSCALER, LANCZOS = "auto", "lanczos"
# --fast: SD 1.5 distilled to a few steps by LCM-LoRA (fused into the UNet on loading), and TAESD, a
# decoder of SD's latents with 1/40 of the VAE's weights.
LCM_LORA = "latent-consistency/lcm-lora-sdv1-5"
TAESD = "madebyollin/taesd"
# --reference: IP-Adapter for SD 1.5 as its authors publish it, a hub file whose folder also holds its image
# encoder (models/image_encoder: CLIP ViT-H/14 with its projection).
IP_ADAPTER = "h94/IP-Adapter/models/ip-adapter_sd15.safetensors"
# The same three made for SDXL: its LCM-LoRA, TAESD for its latents, and IP-Adapter with its own image
# encoder (sdxl_models/image_encoder: OpenCLIP ViT-bigG/14, projection 1280).
LCM_LORA_XL = "latent-consistency/lcm-lora-sdxl"
TAESD_XL = "madebyollin/taesdxl"
IP_ADAPTER_XL = "h94/IP-Adapter/sdxl_models/ip-adapter_sdxl.safetensors"
# --transitions video: LTX-Video 0.9.5, the newest 2B LTX-Video published in diffusers' layout and the first to
# take pictures at any frame (a first and a last one: a transition between two keyframes). Its 2B transformer,
# T5-XXL and VAE fit one 24 GB GPU in bfloat16 (docs/models.md, "Transitions drawn by a video model").
LTX_VIDEO = "Lightricks/LTX-Video-0.9.5"
# The first/last-frame video models of today (issue: video families): LTX-2 (a 19B transformer that draws sound too,
# which musicvid leaves out: the sound is the song) and Wan 2.1 FLF2V 14B at 720p, and the tiny random pipelines of
# their classes (musicvid.models.tiny_video)
LTX2 = "Lightricks/LTX-2"
WAN_FLF2V = "Wan-AI/Wan2.1-FLF2V-14B-720P-diffusers"
TINY_LTX2 = "tiny-random-ltx2"
TINY_WAN = "tiny-random-wan"
# `musicvid score`: CLIP ViT-L/14, whose text tower is the one SD 1.5 reads, scores how well each keyframe
# shows its prompt and its lyric (CLIPScore); --scorer names another CLIP-family model (e.g. PickScore).
SCORER = "openai/clip-vit-large-patch14"


@dataclass(frozen=True)
class Family:
    """What goes with a family of diffusion models: the size it was trained to draw and the step its sides come in
    (the VAE's 8 pixels a latent, the flow-matching transformers' 2 × 2 latents a patch), the steps and guidance
    its card draws with, and the models of --fast and --reference made for it (None: the family has none)."""

    size: tuple[int, int]
    size_step: int
    steps: int
    guidance: float
    fast_lora: str | None
    fast_decoder: str | None
    ip_adapter: str | None


FAMILIES = {
    "sd": Family((512, 512), 8, 25, 7.5, LCM_LORA, TAESD, IP_ADAPTER),
    "sdxl": Family((1024, 1024), 8, 25, 7.5, LCM_LORA_XL, TAESD_XL, IP_ADAPTER_XL),
    # Z-Image-Turbo's card: 8 steps, no guidance (it is distilled; guidance above 0 runs the transformer twice)
    "zimage": Family((1024, 1024), 16, 8, 0.0, None, None, None),
    # FLUX.2 klein 4B's card: 4 steps; distilled, so its pipeline ignores guidance (1: none)
    "klein": Family((1024, 1024), 16, 4, 1.0, None, None, None),
}
# The families drawn by a flow-matching transformer (not a UNet): their text tokens carry positions
FLOW_FAMILIES = ("zimage", "klein")
# The families that read a reference picture themselves, in context (FLUX.2 klein's `image`), without IP-Adapter
IN_CONTEXT_REFERENCES = ("klein",)
FAMILY_NAMES = {"sd": "Stable Diffusion 1.x", "sdxl": "SDXL", "zimage": "Z-Image", "klein": "FLUX.2 klein"}
# The pipeline class a repository's model_index.json names, by family (musicvid.models.loading.diffusion_family)
PIPELINE_FAMILIES = {
    "StableDiffusionPipeline": "sd",
    "StableDiffusionXLPipeline": "sdxl",
    "ZImagePipeline": "zimage",
    "Flux2KleinPipeline": "klein",
}


@dataclass(frozen=True)
class VideoFamily:
    """What goes with a family of video models (--video-model): the pipeline that draws from a first to a last
    frame, its clips' frames (frame_step × k + 1, at most max_frames: the longest clip its card draws), the rate
    it draws at (None: any, told as the pipeline's frame_rate), the step its sides come in and the smallest side it
    draws, and its card's steps and guidance."""

    pipeline: str
    frame_step: int
    max_frames: int
    rate: float | None
    size_step: int
    smallest: int
    steps: int
    guidance: float


VIDEO_FAMILIES = {
    # LTX-Video 0.9.5's recipe: 40 steps, guidance 3, up to 121 frames (5 s at 24 fps); a side of one latent (32)
    "ltx-video": VideoFamily("LTXConditionPipeline", 8, 121, None, 32, 32, 40, 3.0),
    # LTX-2's pipeline defaults: 30 steps, guidance 3, 121 frames; its decoder pads each side by reflection, which
    # takes 2 latents a side (64 pixels)
    "ltx2": VideoFamily("LTX2ConditionPipeline", 8, 121, None, 32, 64, 30, 3.0),
    # Wan 2.1 FLF2V's: 81 frames at its 16 fps (5 s), 50 steps, guidance 5; sides in steps of 16 (8 pixels a
    # latent, 2 × 2 latents a patch)
    "wan": VideoFamily("WanImageToVideoPipeline", 4, 81, 16.0, 16, 16, 50, 5.0),
}
VIDEO_FAMILY_NAMES = {"ltx-video": "LTX-Video", "ltx2": "LTX-2", "wan": "Wan 2.1 FLF2V"}
# The pipeline class a video repository's model_index.json names, by family: each family's classes load one set of
# components (LTX-Video 0.9.5's says LTXPipeline, LTX-2's LTX2Pipeline; their condition pipelines load them)
VIDEO_PIPELINES = {
    **dict.fromkeys(("LTXPipeline", "LTXImageToVideoPipeline", "LTXConditionPipeline"), "ltx-video"),
    **dict.fromkeys(("LTX2Pipeline", "LTX2ImageToVideoPipeline", "LTX2ConditionPipeline"), "ltx2"),
    "WanImageToVideoPipeline": "wan",
}
# The repository whose configs and tokenizers a checkpoint file of each family loads with
# (musicvid.models.single_file): its architecture is the family's
CONFIG_REPOSITORIES = {"sd": SD15, "sdxl": SDXL, "zimage": ZIMAGE, "klein": KLEIN}
# The families of the models named here, known without reading their model index
KNOWN_FAMILIES = {
    **{TINY: "sd", SD15_RANDOM: "sd", SD15: "sd", TINY_XL: "sdxl", SDXL_RANDOM: "sdxl", SDXL: "sdxl"},
    **{ZIMAGE: "zimage", TINY_ZIMAGE: "zimage", KLEIN: "klein", TINY_KLEIN: "klein"},
}
# The video families of the video models named here, known without reading their model index
KNOWN_VIDEO_FAMILIES = {
    TINY: "ltx-video",
    LTX_VIDEO: "ltx-video",
    LTX2: "ltx2",
    TINY_LTX2: "ltx2",
    WAN_FLF2V: "wan",
    TINY_WAN: "wan",
}


@dataclass(frozen=True)
class ModelSet:
    asr_backend: str
    asr: str
    vipe: str
    vipe_tokenizer: str | None  # None: the checkpoint's own, else GPT-2 Medium's (see ViPE.from_pretrained)
    diffusion: str
    separator: str  # the Demucs model of --separate-vocals
    upscaler: str  # the model of --resolution: a hub file org/name/file.pth, a local file, auto or lanczos
    auto_upscaler: str  # the network auto takes on a GPU (on the CPU: Lanczos)
    fast_upscaler: str  # the network auto takes on a GPU with --fast
    fast_lora: str | None  # the few-step LoRA of --fast (a hub repository or a local file or folder; None: none)
    fast_decoder: str | None  # the tiny decoder of --fast (an AutoencoderTiny repository or folder)
    ip_adapter: str | None  # the adapter of --reference: a hub file or local file beside its image_encoder/ folder
    video: str  # the first/last-frame video model of --transitions video (a repository or folder of VIDEO_FAMILIES)
    # Render defaults that suit the models: SD 1.5 draws 512², SDXL 1024², the tiny ones a thumbnail.
    size: tuple[int, int]
    size_step: int  # the family's (Family.size_step)
    steps: int
    guidance: float
    transition_steps: int  # the video model's (VideoFamily.steps)
    scorer: str  # the CLIP-family model that scores the keyframes (musicvid.pictures.scores)

    def describe(self) -> dict[str, str]:
        return {"asr": f"{self.asr_backend}:{self.asr}", "vipe": self.vipe, "diffusion": self.diffusion}

    def diffusion_model(self, fast: bool) -> str:
        """What draws the pictures, as their keys name it: the diffusion model, with --fast its LoRA and decoder."""
        return f"{self.diffusion}+{self.fast_lora}+{self.fast_decoder}" if fast else self.diffusion


PRESETS = {
    "default": ModelSet(
        asr_backend="openai-whisper",
        asr=WHISPER_LARGE,
        vipe=DEFAULT_VIPE,
        vipe_tokenizer=DEFAULT_VIPE_TOKENIZER,
        diffusion=SD15,
        separator=DEMUCS,
        upscaler=AUTO_UPSCALER,
        auto_upscaler=REAL_ESRGAN,
        fast_upscaler=REAL_ESRGAN_FAST,
        fast_lora=LCM_LORA,
        fast_decoder=TAESD,
        ip_adapter=IP_ADAPTER,
        video=LTX_VIDEO,
        size=(512, 512),
        size_step=8,
        steps=25,
        guidance=7.5,
        transition_steps=VIDEO_FAMILIES["ltx-video"].steps,
        scorer=SCORER,
    ),
    "tiny": ModelSet(
        asr_backend="openai-whisper",
        asr=TINY,
        vipe=TINY,
        vipe_tokenizer=TINY,
        diffusion=TINY,
        separator=TINY,
        upscaler=AUTO_UPSCALER,
        auto_upscaler=TINY,
        fast_upscaler=TINY,
        fast_lora=TINY,
        fast_decoder=TINY,
        ip_adapter=TINY,
        video=TINY,
        size=(64, 64),
        size_step=8,
        steps=4,
        guidance=7.5,
        transition_steps=2,
        scorer=TINY,
    ),
}
PRESETS["sdxl"] = replace(PRESETS["default"], diffusion=SDXL, **asdict(FAMILIES["sdxl"]))
PRESETS["tiny-xl"] = replace(PRESETS["tiny"], diffusion=TINY_XL)
PRESETS["zimage"] = replace(PRESETS["default"], diffusion=ZIMAGE, **asdict(FAMILIES["zimage"]))
PRESETS["klein"] = replace(PRESETS["default"], diffusion=KLEIN, **asdict(FAMILIES["klein"]))
PRESETS["tiny-zimage"] = replace(
    PRESETS["tiny"], diffusion=TINY_ZIMAGE, **{**asdict(FAMILIES["zimage"]), "size": (64, 64)}
)
PRESETS["tiny-klein"] = replace(
    PRESETS["tiny"], diffusion=TINY_KLEIN, **{**asdict(FAMILIES["klein"]), "size": (64, 64)}
)


UPSCALE_BATCH = 4  # frames per pass of the network on a GPU
# Prompts per pass of a flow-matching family's text encoder (musicvid.pictures.flow): each holds its hidden states
# (klein's, its logits over Qwen3's 152k tokens too), 0.2-0.25 GB a prompt, and a render's scenes all at once would
# hold GBs beside Qwen3's 8; the encoder reads each scene's prompt once a render, so the batch costs no time worth
# having (the memory plan counts the text encoder's pass at it)
PROMPT_BATCH = 4
