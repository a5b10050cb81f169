"""Small torch modules shared by the importer and export tests (import only after
``pytest.importorskip("torch")``)."""

from __future__ import annotations

from torch import nn


class Reuse(nn.Module):
    """One module (``act``) called twice: its second call is not a split point."""

    def __init__(self):
        super().__init__()
        self.a = nn.Linear(4, 4)
        self.act = nn.ReLU()
        self.b = nn.Linear(4, 4)

    def forward(self, x):
        return self.b(self.act(self.a(self.act(x))))
