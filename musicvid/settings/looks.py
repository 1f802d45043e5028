"""What a look (--look) and --fast set at once: several options each, which options given beside them win
(musicvid.settings.resolve.resolve_render_settings lays them under what a person chose)."""

# A look sets several options at once; options given beside it win.
# The music video's frames between are blends: it has no camera move, and between morph frames a blend
# is as close to the truth as motion compensation (48.1 dB both, benchmarks/delivery.py) at 25 times the
# speed; with minterpolate, on one core, the look's delivery made 11 frames/s, with blend 43 (docs/frames.md).
LOOKS = {
    "music-video": dict(
        pacing="beats", output_fps=30.0, interpolator="blend", aspect="16:9", resolution="1080p", captions="karaoke"
    ),
}
# --fast's sampling: LCM-LoRA's own recipe, 4 steps without classifier-free guidance (a guidance of 1
# runs the UNet once per step instead of twice); it draws well in 2 to 8 steps.
FAST = dict(steps=4, guidance=1.0)  # what --fast sets; options given beside it win
FAST_MAX_STEPS = 8
