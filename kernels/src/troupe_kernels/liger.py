"""Liger's fused linear GRPO loss, when `liger-kernel` is installed (a GPU extra; imported lazily).

`liger_grpo_loss_class()` returns `liger_kernel.chunked_loss.LigerFusedLinearGRPOLoss` or None;
`liger_unavailable_reason()` says why not. The torch path (`token_logprobs` + the runtime's GRPO
loss) is its exact equivalent wherever Liger is absent.
"""

from __future__ import annotations

from typing import Any


def _load() -> tuple[Any, str | None]:
    try:
        import torch

        if not torch.cuda.is_available():
            return None, "Liger's fused GRPO loss runs on CUDA and there is no CUDA device"
        from liger_kernel.chunked_loss import LigerFusedLinearGRPOLoss
    except Exception as exc:  # noqa: BLE001 - any failure means "not usable here"
        return None, f"liger-kernel is not importable ({type(exc).__name__}: {exc}); pip install liger-kernel"
    return LigerFusedLinearGRPOLoss, None


def liger_grpo_loss_class() -> Any:
    return _load()[0]


def liger_unavailable_reason() -> str | None:
    return _load()[1]
