"""fwcheck.py -- the checking kit the framework tests (tests/python/*_basic.py) share.

Every check prints one line, "ok   WHAT" or "FAIL WHAT: DETAIL", so a log says what
was checked and how the first failure looked. An exception inside a step is a
failure of that step, reported with its type, message and the line of the test
that raised it; a step marked fatal ends the script when it fails, because the
checks after it need its result (saying so: nothing is skipped silently).
finish() prints "PASS NAME" when every check held and returns the exit status.

A test that hangs prints every thread's Python stack after CRM_PY_WATCHDOG
seconds (default 150) and exits 1; a crash (SIGSEGV, SIGABRT...) prints the
Python stack where it happened (faulthandler).

Environment, read by expect_kernels():
  CUDAREM_EXPECT_PTX=1    kernels a framework compiles to PTX must compute right;
                          unset: they must fail with a CUDA error, cleanly (an
                          exception, not a crash or a hang), unless the test knows
                          the emulated device's PTX engine gets their PTX (CuPy's
                          and numba's do: their tests expect them to run).
  CUDAREM_EXPECT_CUBIN=1  the same for kernels shipped only as machine code (the
                          PyPI torch wheel has no PTX): they run on a real GPU
                          server, not on the emulated device.
"""
import faulthandler
import os
import sys
import traceback

faulthandler.enable()
faulthandler.dump_traceback_later(int(os.environ.get("CRM_PY_WATCHDOG", "150")), exit=True)


class Fatal(Exception):
    """A fatal step failed; the checks after it cannot run."""


class Checker:
    def __init__(self, name):
        self.name = name
        self.checks = 0
        self.failures = 0
        print("== %s (python %s, LD_PRELOAD=%s, CUDAREM_SERVER=%s)" % (
            name, sys.version.split()[0], os.environ.get("LD_PRELOAD", "(unset)"),
            os.environ.get("CUDAREM_SERVER", "(unset)")), flush=True)

    def check(self, cond, what, detail=""):
        """Counts one check; prints ok or FAIL. Returns COND as a bool."""
        self.checks += 1
        if cond:
            print("ok   %s" % what, flush=True)
        else:
            self.failures += 1
            print("FAIL %s%s" % (what, ": " + detail if detail else ""), flush=True)
        return bool(cond)

    def step(self, what, fn, *args, fatal=False):
        """Runs FN(*ARGS) as one check that holds when it returns; returns its
        value, or None when it raised (then raises Fatal if FATAL)."""
        try:
            value = fn(*args)
        except Exception as e:  # noqa: BLE001 -- any failure is the finding
            self.check(False, what, describe(e))
            if fatal:
                raise Fatal(what) from e
            return None
        self.check(True, what)
        return value

    def expect_error(self, what, fn, accept, fatal=False):
        """Runs FN, which must raise an exception ACCEPT(exc) approves of (the
        clean failure a framework reports for a CUDA error). Returning normally,
        or raising anything else, is a failure."""
        try:
            value = fn()
        except Exception as e:  # noqa: BLE001
            ok = accept(e)
            self.check(ok, what, ("raised as expected: " if ok else "wrong exception: ") + describe(e))
            if not ok and fatal:
                raise Fatal(what) from e
            return e
        self.check(False, what, "no error raised; got %r" % (value,))
        return None

    def note(self, text):
        print("     %s" % text, flush=True)

    def run(self, body):
        """Runs BODY(self), turning a Fatal into its line, and returns the exit status."""
        try:
            body(self)
        except Fatal as f:
            print("STOP after the failure of '%s': the remaining checks need it" % f, flush=True)
        except Exception as e:  # noqa: BLE001 -- a bug in the test body itself
            self.check(False, "test body", describe(e))
        return self.finish()

    def finish(self):
        if self.failures == 0 and self.checks > 0:
            print("PASS %s (%d checks)" % (self.name, self.checks), flush=True)
            return 0
        print("FAILED %s: %d of %d checks" % (self.name, self.failures, self.checks), flush=True)
        return 1


def describe(e):
    """TYPE: message (at file:line of the test that made the call)."""
    where = ""
    tb = traceback.extract_tb(e.__traceback__)
    here = os.path.dirname(os.path.abspath(__file__))
    mine = [f for f in tb if os.path.dirname(os.path.abspath(f.filename)) == here
            and os.path.basename(f.filename) != "fwcheck.py"]
    if mine:
        where = " (at %s:%d)" % (os.path.basename(mine[-1].filename), mine[-1].lineno)
    if tb:
        last = tb[-1]
        where += " [raised in %s:%d %s]" % (last.filename, last.lineno, last.name)
    msg = str(e).strip().replace("\n", " | ")
    if len(msg) > 600:
        msg = msg[:600] + "..."
    return "%s.%s: %s%s" % (type(e).__module__, type(e).__name__, msg, where)


def expect_kernels(kind):
    """True when kernels of KIND ("PTX" or "CUBIN") must compute right, False when
    they must fail cleanly with a CUDA error (see the module comment)."""
    return os.environ.get("CUDAREM_EXPECT_" + kind, "") == "1"


def random_bytes(n, seed):
    import numpy
    return numpy.random.default_rng(seed).integers(0, 256, size=n, dtype=numpy.uint8)


COPY_SIZES = [1, 4097, (1 << 20), (1 << 20) + 1, 5 << 20, 32 << 20]
