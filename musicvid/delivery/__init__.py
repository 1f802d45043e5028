"""The video: frames upscaled, interpolated, captioned and encoded with the song."""
