"""Peak bytes of the tensors an operation allocates, on any device (CPU included): a dispatch mode
counts every new storage an op returns and forgets it when its last tensor object is freed.

What it cannot see: scratch memory inside one aten op (small for the ops used here). Used to check
a path's analytic memory formula on CPU, where `torch.cuda.max_memory_allocated` does not exist."""

from __future__ import annotations

import weakref

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten


class LiveBytes(TorchDispatchMode):
    def __init__(self) -> None:
        super().__init__()
        self.live = 0
        self.peak = 0
        self._refs: dict[int, int] = {}  # storage data_ptr -> tensor objects alive
        self._sizes: dict[int, int] = {}

    def _release(self, ptr: int) -> None:
        self._refs[ptr] -= 1
        if self._refs[ptr] == 0:
            self.live -= self._sizes.pop(ptr)
            del self._refs[ptr]

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        inputs = [a for a in tree_flatten((args, kwargs or {}))[0] if isinstance(a, torch.Tensor)]
        before = {id(a) for a in inputs}
        input_ptrs = {a.untyped_storage().data_ptr() for a in inputs}
        out = func(*args, **(kwargs or {}))
        for t in tree_flatten(out)[0]:
            if not isinstance(t, torch.Tensor) or id(t) in before:
                continue
            st = t.untyped_storage()
            ptr = st.data_ptr()
            if ptr == 0 or (ptr not in self._refs and ptr in input_ptrs):
                continue  # a view of memory that existed before (an input's)
            if ptr not in self._refs:
                self._refs[ptr] = 0
                self._sizes[ptr] = st.nbytes()
                self.live += st.nbytes()
                self.peak = max(self.peak, self.live)
            self._refs[ptr] += 1
            weakref.finalize(t, self._release, ptr)
        return out
