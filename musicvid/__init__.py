"""musicvid: turn a song into a music video whose pictures show what the lyrics mean."""

__version__ = "0.1.0"
