"""The lyrics as an .srt beside the video: one cue per captioned scene while its line is sung, written so that
players read each cue's text as its words (ffmpeg's SRT reader, and libass after it, take much for times or markup)."""

from __future__ import annotations

import re

from musicvid.delivery.cue_times import cues, srt_time
from musicvid.lyrics.spacing import one_line
from musicvid.lyrics.transcript import Transcript
from musicvid.storyboard.board import Storyboard

WORD_JOINER = "\u2060"  # invisible, and no digit: put before a cue's text that would read as its times
# ffmpeg's SRT reader (mpv's too) takes any line that parses as times for a new cue's, wherever it stands
_LIKE_TIMES = re.compile(r"\s*[-+]?\d[\d:.,\s]*-->")
# What ffmpeg's SRT reader takes for markup (an HTML tag: one it knows, it applies; any other, it drops), and what
# libass then does (a backslash's break; a brace's block, hidden: "{forever}", applied: "{\an8}", shown escaped)
_SRT_MARKUP = re.compile(r"<(?=/?[a-z])|\{(?=\\)|\\(?=[Nnh])", re.IGNORECASE)


def _cue_text(text: str) -> str:
    """A lyric as an .srt cue's text: on one line, and behind a word joiner where it begins like times
    ("00:00:05,000 --> …"), which a reader would take for a cue of its own and drop; a word joiner also parts what
    players read as markup (`<i>`, `<p>`, `\\N`) from what makes it so, and a brace is escaped as libass shows it."""
    line = one_line(text)  # (a line break in it would be a blank line, which ends a cue: the rest, cues of their own)
    line = re.sub(r"[{}]", r"\\\g<0>", _SRT_MARKUP.sub(r"\g<0>" + WORD_JOINER, line))
    return WORD_JOINER + line if _LIKE_TIMES.match(line) else line


def srt(storyboard: Storyboard, heard: Transcript | None = None) -> str:
    """One cue per scene with words (captioned), while `heard` (the transcript) sings its line (cues), in the song's
    own language, whatever whitespace its text holds."""
    blocks = [
        f"{n}\n{srt_time(a)} --> {srt_time(b)}\n{_cue_text(s.text)}\n"
        for n, (s, _, (a, b)) in enumerate(cues(storyboard, heard), start=1)
    ]
    return "\n".join(blocks)
