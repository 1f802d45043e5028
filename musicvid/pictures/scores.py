"""How well a keyframe shows its scene: CLIPScore against the scene's prompt and against its lyric line.

A CLIP-family model (musicvid.models.scorer loads it by name: CLIP ViT-L/14 by default, whose text tower is
the one SD 1.5 reads) embeds a picture and a text; their cosine says how well one describes the other.
CLIPScore (Hessel et al., 2021) reports it as 2.5 × max(cos, 0): a real caption's cosine of about 0.2–0.4
reads 0.5–1.0, and no score is below 0 or above 2.5. Each keyframe gets two:

- prompt: against the ViPE prompt it was drawn from — is the prompt drawn?
- lyric: against the line it illustrates (its English, where the song is in another language) — does the
  picture show what the line means? A scene without words has no lyric score.

rank_candidates orders several keyframes drawn for one scene, best first (best-of-N).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
from PIL import Image

from musicvid.models.scorer import Scorer
from musicvid.storyboard.board import Scene, Storyboard

CLIP_SCORE_WEIGHT = 2.5  # CLIPScore's w


def clip_score(cos: float | np.ndarray) -> float | np.ndarray:
    """CLIPScore of a cosine (or of each of an array): 2.5 × max(cos, 0)."""
    scores = CLIP_SCORE_WEIGHT * np.maximum(cos, 0.0)
    return float(scores) if np.ndim(scores) == 0 else scores


@dataclass(frozen=True)
class SceneScores:
    """A keyframe's CLIPScores (0–2.5): against its lyric (None: a scene without words) and its prompt."""

    lyric: float | None
    prompt: float

    @property
    def together(self) -> float:
        """What ranks candidates: the mean of the two, or the prompt's alone where there is no lyric."""
        return self.prompt if self.lyric is None else (self.lyric + self.prompt) / 2

    def to_dict(self) -> dict[str, float | None]:
        return {"lyric": self.lyric, "prompt": self.prompt}

    @classmethod
    def from_dict(cls, data: dict) -> SceneScores:
        lyric = data.get("lyric")
        return cls(None if lyric is None else float(lyric), float(data["prompt"]))


def picked_scores(storyboard: Storyboard) -> dict[int, SceneScores]:
    """The scores the storyboard records of each picked keyframe (musicvid.storyboard.picks), by scene index."""
    return {s.index: SceneScores(s.pick.lyric, s.pick.prompt) for s in storyboard.scenes if s.pick}


def lyric_of(scene: Scene) -> str | None:
    """The line a scene's picture should show (its English); None for a scene without words."""
    return (scene.english.strip() or None) if scene.kind == "lyric" else None


def score_keyframes(
    scorer: Scorer,
    pictures: Sequence[np.ndarray | Image.Image],
    prompts: Sequence[str],
    lyrics: Sequence[str | None],
) -> list[SceneScores]:
    """Each picture's scores against its prompt and its lyric (None or empty: no lyric score)."""
    if not len(pictures) == len(prompts) == len(lyrics):
        raise ValueError(f"{len(pictures)} pictures, {len(prompts)} prompts and {len(lyrics)} lyrics: one each")
    sung = [n for n, lyric in enumerate(lyrics) if lyric and lyric.strip()]
    prompt_cos = scorer.score(pictures, prompts)
    lyric_cos = scorer.score([pictures[n] for n in sung], [lyrics[n] for n in sung])
    prompt_scores, lyric_scores = clip_score(prompt_cos), dict(zip(sung, clip_score(lyric_cos)))
    return [
        SceneScores(None if n not in lyric_scores else float(lyric_scores[n]), float(prompt_scores[n]))
        for n in range(len(pictures))
    ]


def rank_candidates(scores: Sequence[SceneScores]) -> list[int]:
    """The candidates' indices, best first: by the mean of the lyric and prompt scores (the prompt's alone
    without a lyric), ties by the lyric score (the line is what the video is about), then by order."""
    return sorted(
        range(len(scores)),
        key=lambda n: (-scores[n].together, -(scores[n].lyric if scores[n].lyric is not None else scores[n].prompt)),
    )
