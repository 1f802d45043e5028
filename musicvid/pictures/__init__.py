"""The pictures: which picture each frame shows (schedule, pacing), the keyframes picked among candidates, and every
picture drawn (draw: Stable Diffusion's and the flow-matching families' keyframes and morphs, a video model's
transitions) from the storyboard's prompts, which ViPE wrote (musicvid.storyboard.elaborate)."""
