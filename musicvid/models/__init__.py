"""The models: which ones a run uses, checked before anything loads (choose, names, families), how they load onto a
device (loading, drawing, kinds) and are kept (registry), what each weighs (sizes, footprint), and the small random
ones the tiny presets build instead of downloading (tiny, tiny_flow, tiny_video). The presets themselves are
data: musicvid.settings.presets."""
