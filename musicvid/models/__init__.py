"""The models: which ones a run uses (presets), how they load onto a device (loading), and the small
random ones the tiny preset builds instead of downloading (tiny)."""
