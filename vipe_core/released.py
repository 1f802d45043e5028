"""The released ViPE models by hub name: light to import (no torch), for whoever only names them."""

# The paper's default: ViPE-M (GPT-2 Medium) fine-tuned with context size 7.
DEFAULT_VIPE = "fittar/ViPE-M-CTX7"
# The released checkpoints ship no tokenizer; their authors load GPT-2 Medium's (`gpt2-medium`, which the
# hub now redirects to this name).
DEFAULT_VIPE_TOKENIZER = "openai-community/gpt2-medium"
