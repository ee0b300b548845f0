#!/usr/bin/env python3
"""reference_check.py -- checks examples/train.py's numpy reference network (the
yardstick for the device's gradients) against central finite differences, and
its parameter layout. No device is used. Prints FAIL lines and a final
"PASS reference"; exit 0 only when every check held."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples"))
import train  # noqa: E402

failures = 0


def check(cond, what):
    global failures
    if not cond:
        failures += 1
        print("FAIL", what)


def check_layout():
    offsets, total = train.param_layout()
    previous_end = 0
    for name, shape in train.PARAM_SHAPES:
        check(offsets[name] % train.ALIGN == 0, "%s offset %d is aligned" % (name, offsets[name]))
        check(offsets[name] >= previous_end, "%s does not overlap its predecessor" % name)
        previous_end = offsets[name] + int(np.prod(shape))
    check(previous_end <= total, "layout holds every parameter")


def loss_at(params, x, onehot):
    return train.NumpyNet.loss_and_grads(params, x, onehot)[0]


def check_gradients(rng):
    """Every analytic gradient entry of a small batch against (f(p+e)-f(p-e))/2e."""
    n = 5
    x = rng.standard_normal((n, train.IMAGE * train.IMAGE))
    onehot = train.one_hot(rng.integers(0, train.CLASSES, n)).astype(np.float64)
    params = train.init_params(rng).astype(np.float64)
    train.unpack(params)["b1"][...] = rng.standard_normal(train.FILTERS) * 0.1  # off the kinks
    _, grads = train.NumpyNet.loss_and_grads(params, x, onehot)
    eps = 1e-5
    for name, view in train.unpack(params).items():
        flat_index = np.arange(view.size)
        if view.size > 300:  # the dense weights: a spread sample is enough
            flat_index = rng.choice(view.size, 300, replace=False)
        offset = train.param_layout()[0][name]
        worst = 0.0
        for i in flat_index:
            plus, minus = params.copy(), params.copy()
            plus[offset + i] += eps
            minus[offset + i] -= eps
            numeric = (loss_at(plus, x, onehot) - loss_at(minus, x, onehot)) / (2 * eps)
            worst = max(worst, abs(numeric - grads[offset + i]))
        check(worst < 1e-6, "d%s matches finite differences (worst error %.3g)" % (name, worst))


def check_forward_shapes(rng):
    params = train.init_params(rng)
    logits, _ = train.NumpyNet.forward(params, rng.standard_normal((7, 64)))
    check(logits.shape == (7, train.CLASSES), "logits shape")


def main():
    rng = np.random.default_rng(1234)
    check_layout()
    check_forward_shapes(rng)
    check_gradients(rng)
    if failures == 0:
        print("PASS reference")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
