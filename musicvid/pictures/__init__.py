"""The pictures: ViPE's prompts, Stable Diffusion's keyframes, the morphs between them and where each frame falls."""
