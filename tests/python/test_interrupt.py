"""Ctrl-C during a long launch raises KeyboardInterrupt promptly and leaves
the interpreter (and warpsim) usable: the launch runs without the GIL while
the calling thread looks for signals, and stops when told to."""

import os
import signal
import threading
import time

import numpy as np
import pytest

import warpsim

# Counts to `n` in every thread, then stores the count: with a huge `n`, a runaway loop.
SPIN_PTX = """.version 7.0
.target sm_80
.address_size 64
.visible .entry spin(.param .u64 out, .param .u32 n)
{
    .reg .b32 %r<4>;
    .reg .b64 %rd<4>;
    .reg .pred %p<2>;
    ld.param.u64 %rd1, [out];
    ld.param.u32 %r2, [n];
    mov.u32 %r1, 0;
LOOP:
    add.u32 %r1, %r1, 1;
    setp.lt.u32 %p1, %r1, %r2;
    @%p1 bra LOOP;
    mov.u32 %r3, %tid.x;
    mul.wide.u32 %rd2, %r3, 4;
    add.s64 %rd3, %rd1, %rd2;
    st.global.u32 [%rd3], %r1;
    ret;
}
"""


@pytest.mark.parametrize("mode", ["functional", "timing"])
def test_ctrl_c_stops_a_runaway_launch_and_the_next_launch_runs(mode):
    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signals reach Python's main thread only")
    m = warpsim.Module(ptx=SPIN_PTX, name="spin.ptx")
    out = np.zeros(256, np.uint32)
    sent = []

    def interrupt():
        sent.append(time.monotonic())
        os.kill(os.getpid(), signal.SIGINT)

    timer = threading.Timer(0.5, interrupt)
    t0 = time.monotonic()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            # Billions of instructions per block, with no budget to stop them.
            m.launch("spin", 1024, 256, [out, np.uint32(0xFFFFFFFF)], mode=mode, max_instructions=1 << 62)
    finally:
        timer.cancel()
    stopped = time.monotonic()
    assert sent, "the launch ended before the interrupt was sent"
    assert stopped - sent[0] < 1.0, f"KeyboardInterrupt came {stopped - sent[0]:.2f} s after SIGINT"
    assert stopped - t0 < 5.0
    # The interrupted launch wrote nothing back; the next one runs in full.
    assert not out.any()
    r = m.launch("spin", 2, 256, [out, np.uint32(100)], mode=mode)
    assert (out == 100).all()
    assert r.to_dict()["blocks"] == 2


def test_ctrl_c_on_a_huge_grid_of_short_blocks_returns_promptly():
    # 2^31-1 x 65535 x 65535 blocks of one short thread each: far too many to even visit
    # one by one once stopped, so the launch must leave the rest of the grid unvisited.
    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signals reach Python's main thread only")
    import faulthandler

    m = warpsim.Module(ptx=SPIN_PTX, name="spin.ptx")
    out = np.zeros(1, np.uint32)
    sent = []

    def interrupt():
        sent.append(time.monotonic())
        os.kill(os.getpid(), signal.SIGINT)

    timer = threading.Timer(0.5, interrupt)
    # Without the fix this launch would not end: fail the run loudly instead of hanging.
    faulthandler.dump_traceback_later(60, exit=True)
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            m.launch("spin", (2**31 - 1, 65535, 65535), 1, [out, np.uint32(1)], gpu="h200")
    finally:
        timer.cancel()
        faulthandler.cancel_dump_traceback_later()
    stopped = time.monotonic()
    assert sent, "the launch ended before the interrupt was sent"
    assert stopped - sent[0] < 2.0, f"KeyboardInterrupt came {stopped - sent[0]:.2f} s after SIGINT"
    assert not out.any()


def test_long_launches_show_a_tqdm_bar_when_tqdm_is_installed(monkeypatch):
    import sys
    import types

    from warpsim import _core

    bars = []

    class FakeTqdm:
        def __init__(self, total=None, **kw):
            self.total, self.n, self.closed, self.ns, self.kw = total, 0, False, [], kw
            bars.append(self)

        def set_postfix_str(self, s, refresh=True):
            self.postfix = s

        def refresh(self):
            self.ns.append(self.n)

        def close(self):
            self.closed = True

    auto = types.ModuleType("tqdm.auto")
    auto.tqdm = FakeTqdm
    monkeypatch.setitem(sys.modules, "tqdm", types.ModuleType("tqdm"))
    monkeypatch.setitem(sys.modules, "tqdm.auto", auto)
    monkeypatch.setattr(_core._LaunchBar, "AFTER_S", 0.0)
    m = warpsim.Module(ptx=SPIN_PTX, name="spin.ptx")
    out = np.zeros(32, np.uint32)
    n = 1000
    while True:
        t0 = time.monotonic()
        m.launch("spin", 512, 32, [out, np.uint32(n)], progress=True)
        if time.monotonic() - t0 > 0.3 or n > 1 << 28:
            break
        bars.clear()
        n *= 4
    assert (out == n).all()
    assert bars, "no tqdm bar for a launch of over 0.3 s"
    b = bars[0]
    assert b.total == 512 and b.closed and b.ns and b.kw.get("unit") == "block"
    assert all(x <= y for x, y in zip(b.ns, b.ns[1:])) and b.ns[-1] <= 512
    # Without progress, no bar.
    bars.clear()
    m.launch("spin", 512, 32, [out, np.uint32(n)], progress=False)
    assert not bars
