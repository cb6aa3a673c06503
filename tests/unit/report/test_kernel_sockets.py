"""Each report kernel gets socket paths of its own: with jupyter_client's default IPC name
(``kernel-ipc-<n>`` in the current folder) two reports started at once from one folder connected
to each other's kernel ("Invalid Signature", seen in make test under load)."""

from __future__ import annotations

import os
import tempfile

from workbench.report.kernels import kernel_config as _kernel_config


def test_every_kernel_has_its_own_absolute_socket_prefix() -> None:
    configs = [_kernel_config() for _ in range(50)]
    prefixes = [c.KernelManager.ip for c in configs]
    assert len(set(prefixes)) == 50
    assert all(c.KernelManager.transport == "ipc" for c in configs)
    for prefix in prefixes:
        assert os.path.isabs(prefix)
        assert os.path.dirname(prefix) == tempfile.gettempdir()
        assert len(prefix) + len("-99999") < 100  # under the AF_UNIX path limit (108 bytes)
