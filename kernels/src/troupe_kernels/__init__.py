"""Troupe kernels: log-prob computation from the last hidden state and the LM head.

Only the torch chunked path exists so far; it is the reference and the CPU fallback for the
Triton kernel that a later issue adds.
"""

from .logprobs import NEG_LARGE, plan_tiles, reference_token_logprobs, token_logprobs

__all__ = ["token_logprobs", "reference_token_logprobs", "plan_tiles", "NEG_LARGE"]
