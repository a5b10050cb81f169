"""Baselines of seeds 000 (device-only, Sec. VII-B) and 002 (Edge-Only / Cloud-Only, §5).

* :func:`device_only`: every layer on the device, except server-pinned layers and their
  descendants (they must stay on the server, data flows device -> server only).
* :func:`server_only`: every layer on the server, except device-pinned layers (and, under
  ``input_policy="pin"``, the input layers) with their ancestors. Under ``input_policy="upload"``
  this is seed 002's Cloud-Only: the raw input is uploaded (``tau = D_input / B``, digest 002 §2.5).

Neither is optimal in general (not exact).
"""

from __future__ import annotations

from splitopt.instances.split import SplitInstance


def device_only(instance: SplitInstance) -> list[str]:
    """All layers on the device (server pins and their descendants stay on the server)."""
    return instance.names_of(instance.max_device_mask)


def server_only(instance: SplitInstance) -> list[str]:
    """All layers on the server (device pins, pinned inputs and their ancestors stay on the device)."""
    return instance.names_of(instance.min_device_mask)


__all__ = ["device_only", "server_only"]
