"""Troupe kernels: log-prob computation from the last hidden state and the LM head.

`token_logprobs` dispatches to Triton kernels (forward and backward) on CUDA and to the tiled
torch path elsewhere; neither materialises the [tokens x vocab] logits.
"""

from .logprobs import NEG_LARGE, plan_tiles, reference_token_logprobs, token_logprobs

__all__ = ["token_logprobs", "reference_token_logprobs", "plan_tiles", "NEG_LARGE"]
