"""The report's kernel is asked to shut down without being interrupted first: jupyter_client sends
SIGINT before its shutdown request, and a kernel still finishing a message logged
"[IPKernelApp] ERROR | KeyboardInterrupt caught in kernel." on `make report`'s output, although
nothing failed (tests/system/report/test_report.py runs a report and finds no IPKernelApp line)."""

from __future__ import annotations

import asyncio
import signal

import pytest

from workbench.report.kernels import kernel_manager as _kernel_manager


def test_no_interrupt_is_sent_while_the_kernel_shuts_down(monkeypatch: pytest.MonkeyPatch) -> None:
    manager = _kernel_manager()()
    sent: list[int] = []

    async def signal_kernel(signum: int) -> None:
        sent.append(signum)

    monkeypatch.setattr(manager, "_async_signal_kernel", signal_kernel)
    manager.shutting_down = True
    asyncio.run(manager._async_interrupt_kernel())
    assert sent == []


def test_an_interrupt_asked_for_otherwise_is_jupyter_clients_own() -> None:
    manager = _kernel_manager()()
    assert not manager.shutting_down
    with pytest.raises(RuntimeError, match="No kernel is running"):  # jupyter_client's own: no kernel here
        asyncio.run(manager._async_interrupt_kernel())
    assert signal.SIGINT  # what jupyter_client would send a running kernel in "signal" interrupt mode
