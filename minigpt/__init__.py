"""minigpt: a GPT built only on minigrad, to be read top to bottom.

What is here, and the order to read it in:
- config.py: `GPTConfig`, the hyperparameters (nanoGPT's names), and `TrainConfig`, a training run's settings.
- model.py: `GPT` - attention, MLP, blocks, positional encodings (learned, sinusoidal, RoPE), the KV cache,
  `generate` and `attention_maps`.
- sampling.py: temperature, top-k, top-p and drawing a token from probabilities.
- tokenizer.py: `CharTokenizer`.
- interop.py: moving weights to and from nanoGPT / PyTorch (`from_nanogpt`, `to_nanogpt`).
- data.py, train.py, checkpoint.py, cli.py: the data pipeline, the training loop and the `minigpt` command
  (train, sample, draw); beside them errors.py (what a run can refuse or stop with), preflight.py (the checks
  before a run), signals.py (Ctrl-C, SIGTERM, a closed stdout), progress.py, schema.py (what a checkpoint's files
  must hold) and sizing.py (the memory a configuration needs).

    from minigpt import GPT, GPTConfig, CharTokenizer
    tok = CharTokenizer.from_text(text)
    model = GPT(GPTConfig(vocab_size=tok.vocab_size, block_size=64, n_layer=2, n_head=4, n_embd=64))
    logits, loss = model(idx, targets)
"""

from minigpt.config import GPTConfig
from minigpt.model import GPT
from minigpt.tokenizer import CharTokenizer

__all__ = ["GPT", "CharTokenizer", "GPTConfig"]
