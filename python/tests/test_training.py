"""Training from Python: callbacks (reading losses, stopping), the GIL, Ctrl-C, resume."""

import json
import os
import signal
import threading
import time

import numpy as np
import pytest

import jetpde


def _solve(problem, tmp_path, steps=10, **kw):
    return jetpde.solve(problem, stages=[jetpde.Adam(steps=steps)], seed=0,
                        output_dir=tmp_path / "run", **kw)


def test_callback_sees_every_step_and_its_losses(tiny_problem, tmp_path):
    seen = []
    sol = _solve(tiny_problem, tmp_path, callback=seen.append)
    assert [i.step for i in seen] == list(range(1, 11))
    info = seen[-1]
    assert isinstance(info, jetpde.StepInfo)
    assert info.stage == "adam" and info.learning_rate == pytest.approx(1e-3)
    assert set(info.losses) == set(sol.loss_terms) == set(info.weights)
    assert info.loss == sol.history["loss"][-1]
    assert info.losses["pde"] == sol.history["loss_pde"][-1]
    assert info.seconds >= seen[0].seconds >= 0
    assert "StepInfo(step=10" in repr(info)


def test_callback_every(tiny_problem, tmp_path):
    steps = []
    _solve(tiny_problem, tmp_path, steps=12, callback=lambda i: steps.append(i.step),
           callback_every=5)
    assert steps == [5, 10]
    with pytest.raises(jetpde.Error, match="callback_every: 0"):
        _solve(tiny_problem, tmp_path, callback=print, callback_every=0)


def test_callback_returning_false_stops(tiny_problem, tmp_path):
    sol = _solve(tiny_problem, tmp_path, steps=50, callback=lambda i: i.step < 4)
    assert sol.status == "stopped" and sol.step == 4
    assert len(sol.history["loss"]) == 4
    # Everything a finished run writes, the checkpoint at the step it stopped.
    assert jetpde.load_run(tmp_path / "run").step == 4


def test_callback_returning_none_goes_on(tiny_problem, tmp_path):
    sol = _solve(tiny_problem, tmp_path, callback=lambda i: None)
    assert sol.status == "finished" and sol.step == 10


def test_callback_exception_stops_and_propagates(tiny_problem, tmp_path):
    calls = []

    def boom(info):
        calls.append(info.step)
        if info.step == 3:
            raise RuntimeError("stop here")

    with pytest.raises(RuntimeError, match="stop here"):
        _solve(tiny_problem, tmp_path, steps=50, callback=boom)
    assert calls == [1, 2, 3]
    assert jetpde.load_run(tmp_path / "run").step == 3


def test_training_releases_the_gil(tiny_problem, tmp_path):
    ticks = []
    done = threading.Event()

    def count():
        while not done.is_set():
            ticks.append(1)
            time.sleep(0.001)

    t = threading.Thread(target=count)
    t.start()
    try:
        started = time.monotonic()
        _solve(tiny_problem, tmp_path, steps=1000)
        elapsed = time.monotonic() - started
    finally:
        done.set()
        t.join()
    # The other thread ran while training: about one tick per millisecond of it when it gets a
    # core; holding the GIL, solve() would let it tick only before and after.
    assert len(ticks) > 0.05 * elapsed * 1000


@pytest.fixture
def sigint():
    """Sets SIGINT's handler for one test (sigint(handler)) and puts the process's back after it.

    A test cannot rely on the handler it starts with: a shell without job control starts its
    background commands with SIGINT ignored, and Python then leaves it ignored."""
    saved = signal.getsignal(signal.SIGINT)
    yield lambda handler: signal.signal(signal.SIGINT, handler)
    signal.signal(signal.SIGINT, saved)


def _ctrl_c_at_step_3(info):
    if info.step == 3:
        # SIGINT from another thread, as a terminal's Ctrl-C would arrive (to any thread).
        sent = threading.Event()
        threading.Thread(target=lambda: (os.kill(os.getpid(), signal.SIGINT), sent.set())).start()
        sent.wait(5)


def test_ctrl_c_stops_between_steps_and_returns(tiny_problem, tmp_path, capfd, sigint):
    sigint(signal.default_int_handler)
    sol = _solve(tiny_problem, tmp_path, steps=10000, callback=_ctrl_c_at_step_3)
    assert sol.status == "interrupted"
    assert 3 <= sol.step <= 4
    assert np.all(np.isfinite(sol.evaluate(np.array([[0.0, 0.5]]))))
    assert jetpde.load_run(tmp_path / "run").step == sol.step
    assert "interrupted at step" in capfd.readouterr().err
    # Python's own handler is back: the next Ctrl-C is a KeyboardInterrupt again.
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    with pytest.raises(KeyboardInterrupt):
        signal.raise_signal(signal.SIGINT)
        for _ in range(100):
            time.sleep(0.01)


def test_an_ignored_ctrl_c_stays_ignored(tiny_problem, tmp_path, sigint):
    # A process that ignores SIGINT (nohup, or `cmd &` from a script) trains on through it.
    sigint(signal.SIG_IGN)
    sol = _solve(tiny_problem, tmp_path, steps=20, callback=_ctrl_c_at_step_3)
    assert sol.status == "finished" and sol.step == 20
    assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN


def test_a_handler_of_the_users_own_keeps_ctrl_c(tiny_problem, tmp_path, sigint):
    # solve() leaves the signal to it: Python runs it at the next callback, which can stop.
    caught = []
    sigint(lambda signo, frame: caught.append(signo))

    def on_step(info):
        _ctrl_c_at_step_3(info)
        return not caught

    sol = _solve(tiny_problem, tmp_path, steps=10000, callback=on_step)
    assert caught == [signal.SIGINT]
    assert sol.status == "stopped" and 3 <= sol.step <= 5


def _blocked(tid):
    """The signals blocked in thread `tid` of this process (from /proc)."""
    with open(f"/proc/self/task/{tid}/status") as f:
        mask = int(next(line for line in f if line.startswith("SigBlk:")).split()[1], 16)
    return {s for s in signal.Signals if mask >> (s - 1) & 1}


@pytest.mark.skipif(not os.path.exists("/proc/self/task"), reason="needs Linux's /proc")
def test_no_signal_handler_runs_on_a_computing_thread(tiny_problem, tmp_path, sigint):
    # oneDNN's fp32 GEMMs move the stack pointer into the heap: a handler that ran there (a
    # Ctrl-C during training) corrupted the heap in 6 of 20 tries. So SIGINT (and any signal with
    # a handler) is blocked in the thread that trains, and the OpenMP threads never take one.
    sigint(signal.default_int_handler)
    main = threading.get_native_id()
    seen = set()  # what the training thread had blocked at some moment
    done = threading.Event()

    def watch():  # while training runs (no callback: Python code may take signals there)
        while not done.is_set():
            seen.update(_blocked(main))
            time.sleep(0.001)

    t = threading.Thread(target=watch)
    t.start()
    try:
        _solve(tiny_problem, tmp_path, steps=400)
    finally:
        done.set()
        t.join()
    assert signal.SIGINT in seen
    assert signal.SIGINT not in _blocked(main)  # open again after training
    # The pool's threads (jetpde starts them when imported): every asynchronous signal blocked.
    pool = [tid for tid in os.listdir("/proc/self/task")
            if {signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGUSR1} <= _blocked(tid)]
    threads = int(os.environ.get("OMP_NUM_THREADS", "0").split(",")[0] or 0)
    if (threads or len(os.sched_getaffinity(0))) > 1:
        assert len(pool) >= 1


def test_resume_after_an_interrupt(tiny_problem, tmp_path):
    stopped = _solve(tiny_problem, tmp_path, steps=8, callback=lambda i: i.step < 5)
    assert stopped.step == 5
    resumed = _solve(tiny_problem, tmp_path, steps=8, resume=True)
    straight = jetpde.solve(tiny_problem, stages=[jetpde.Adam(steps=8)], seed=0,
                            output_dir=tmp_path / "straight")
    assert resumed.step == 8 and resumed.status == "finished"
    assert np.array_equal(resumed.theta, straight.theta)


def test_max_steps_caps_every_stage(tiny_problem, tmp_path):
    sol = jetpde.solve(tiny_problem, stages=[jetpde.Adam(steps=100), jetpde.LBFGS(steps=100)],
                       max_steps=3, output_dir=tmp_path / "run")
    assert sol.step == 6
    assert sol.history["stage"] == ["adam"] * 3 + ["lbfgs"] * 3


def test_a_stage_in_fp64(tiny_problem, tmp_path):
    # The stage's precision keyword (jetpde.LBFGS(precision=...)) reaches the trainer: the message
    # and summary.json say the stage ran in fp64; the other stages keep the run's precision.
    sol = jetpde.solve(tiny_problem, stages=[jetpde.Adam(steps=5),
                                             jetpde.LBFGS(steps=3, precision="fp64")],
                       seed=0, output_dir=tmp_path / "run")
    assert "; lbfgs (fp64): " in sol.message
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert [(s["name"], s["precision"]) for s in summary["stages"]] == [("adam", "fp32"),
                                                                        ("lbfgs", "fp64")]
    with pytest.raises(jetpde.Error, match=r"training\.stages\[1\]\.precision: 'f64' is not one "
                                           "of fp64, fp32"):
        jetpde.solve(tiny_problem, stages=[jetpde.Adam(steps=5),
                                           jetpde.LBFGS(steps=3, precision="f64")],
                     output_dir=tmp_path / "bad")


def test_solve_refuses_what_it_cannot_run(tmp_path):
    with pytest.raises(TypeError, match="expected a jetpde.Config"):
        jetpde.solve(42)
    with pytest.raises(jetpde.Error, match="no checkpoint"):
        jetpde.solve(jetpde.Problem(domain=jetpde.geometry.Interval(0, 1), equations=["u_xx"]),
                     output_dir=tmp_path / "empty", resume=True)


def test_solve_from_a_path(tmp_path):
    from conftest import EXAMPLES
    sol = jetpde.solve(EXAMPLES / "heat.yaml", output_dir=tmp_path / "heat", max_steps=2,
                       progress="none")
    assert sol.status == "finished" and sol.step >= 2


def test_solve_in_another_thread(tiny_problem, tmp_path):
    # Signals stay with Python there; training runs and returns as in the main thread.
    out = {}
    before = signal.getsignal(signal.SIGINT)
    t = threading.Thread(target=lambda: out.setdefault("sol", _solve(tiny_problem, tmp_path)))
    t.start()
    t.join()
    assert out["sol"].status == "finished" and out["sol"].step == 10
    assert signal.getsignal(signal.SIGINT) is before


def test_time_windows_give_one_solution_of_the_windows(tmp_path):
    # training.time_windows (time marching): every stage in each window, the steps and the
    # history going on over the windows; the Solution, solved or loaded, is the combined one.
    from conftest import EXAMPLES
    overrides = {"training.time_windows": 2, "sampling.interior_points": 128,
                 "network.hidden": [8, 8], "output.grid": [9], "output.time_steps": 3,
                 "output.progress": "none"}
    sol = jetpde.solve(EXAMPLES / "heat.yaml", stages=[jetpde.Adam(steps=15)], seed=0,
                       output_dir=tmp_path / "run", overrides=overrides)
    assert sol.status == "finished" and sol.step == 30
    history = sol.history
    assert [history["stage"][i] for i in (0, 15)] == ["w1/adam", "w2/adam"]
    assert [int(history["step"][i]) for i in (14, 15)] == [15, 16]
    points = np.array([[0.5, 0.25], [0.5, 0.75]])
    loaded = jetpde.load_run(tmp_path / "run")
    np.testing.assert_array_equal(loaded(points), sol(points))
    with pytest.raises(jetpde.Error, match="training.time_windows: '0' is out of range"):
        jetpde.solve(EXAMPLES / "heat.yaml", output_dir=tmp_path / "bad",
                     overrides={**overrides, "training.time_windows": 0})


def test_a_memory_budget_runs_the_step_in_batches(tmp_path):
    # 8192 interior points: the training step's arena is some MB; under a budget of 2 MB each
    # step runs in batches of the points, with the losses of the step over all of them.
    problem = jetpde.Problem(
        name="budget", domain=jetpde.geometry.Interval(-1, 1).times_time(0, 1),
        equations=["u_t + u*u_x - nu*u_xx"], constants={"nu": 0.01 / np.pi},
        conditions=[jetpde.InitialValue("-sin(pi*x)"), jetpde.Dirichlet("0", on="spatial")],
        network=jetpde.Network(hidden=[32, 32]), sampling={"interior_points": 8192},
        output={"progress": "none", "grid": [11], "time_steps": 2})
    runs = {}
    for name, budget in (("whole", None), ("small", "2 MB")):
        runs[name] = jetpde.solve(problem, stages=[jetpde.Adam(steps=3)], seed=0,
                                  output_dir=tmp_path / name, memory_budget=budget)
    memory = {name: json.loads((tmp_path / name / "summary.json").read_text())["memory"]
              for name in runs}
    assert memory["whole"]["batches"] == 1
    assert memory["whole"]["step_arena_bytes"] > 2e6
    assert memory["small"]["batches"] > 1
    assert memory["small"]["budget_bytes"] == 2000000
    assert memory["small"]["step_arena_bytes"] <= memory["small"]["planned_bytes"] <= 2e6
    assert runs["small"].history["loss"] == pytest.approx(runs["whole"].history["loss"], rel=1e-4)
    with pytest.raises(jetpde.Error, match="memory_budget: '2 parsecs': unknown unit 'parsecs'"):
        jetpde.solve(problem, stages=[jetpde.Adam(steps=1)], output_dir=tmp_path / "bad",
                     memory_budget="2 parsecs")
