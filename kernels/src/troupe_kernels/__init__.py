"""Troupe kernels: log-prob computation from the last hidden state and the LM head.

Only the torch chunked path exists so far; it is the reference and the CPU fallback for the
Triton kernel that a later issue adds.
"""

from .logprobs import reference_token_logprobs, token_logprobs

__all__ = ["token_logprobs", "reference_token_logprobs"]
