"""An Opacus DP-SGD training function for privbound's adapter (optional extra: needs torch and opacus).

``make_train(...)`` returns ``train(dataset, rng) -> model`` that trains logistic regression with Opacus'
``PrivacyEngine.make_private`` (Poisson sampling, per-example clipping to ``clip_norm``, Gaussian noise of
multiplier sigma calibrated for the claim by privbound's dp_accounting calibration); the model has
``loss(X, y)`` (per-example logistic losses), which is what an :class:`~privbound.audit.canaries.InputCanary`
(black-box, last iterate) scores. Gradient canaries would need a hook into Opacus' per-sample gradients and
are not shown.

Run: ``python benchmarks/opacus_train.py [--trials N]`` audits it with an out-of-distribution input canary and
prints the result. Tested by ``tests/audit/test_opacus_train.py`` where torch and opacus are installed (CI has
neither; the test is skipped there).
"""

from __future__ import annotations

import argparse

import numpy as np


def make_train(*, epsilon: float = 2.0, delta: float = 1e-5, sampling_rate: float = 0.5, steps: int = 10,
               clip_norm: float = 1.0, learning_rate: float = 0.1):
    """``train(dataset, rng) -> model``: Opacus DP-SGD on ``dataset = (X, y)``, y in {0, 1}."""
    import torch
    from opacus import PrivacyEngine

    from privbound.learners.dpsgd import calibrate_noise_multiplier

    sigma = calibrate_noise_multiplier(epsilon, delta, sampling_rate, steps)
    bce = torch.nn.functional.binary_cross_entropy_with_logits

    class Model:
        def __init__(self, module):
            self.module = module

        def loss(self, X, y):
            with torch.no_grad():
                z = self.module(torch.as_tensor(np.asarray(X), dtype=torch.float32)).squeeze(-1)
                t = torch.as_tensor(np.asarray(y), dtype=torch.float32)
                return bce(z, t, reduction="none").numpy().astype(float)

    def train(dataset, rng):
        X = torch.as_tensor(np.asarray(dataset[0]), dtype=torch.float32)
        y = torch.as_tensor(np.asarray(dataset[1]), dtype=torch.float32)
        torch.manual_seed(int(rng.integers(2 ** 62)))  # every draw of the run follows from the trial's rng
        module = torch.nn.Linear(X.shape[1], 1)
        torch.nn.init.zeros_(module.weight)
        torch.nn.init.zeros_(module.bias)
        optimizer = torch.optim.SGD(module.parameters(), lr=learning_rate)
        # make_private replaces the loader by Poisson sampling at rate 1 / len(loader) = batch_size / n.
        batch_size = max(1, round(sampling_rate * len(y)))
        loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(X, y), batch_size=batch_size)
        module, optimizer, loader = PrivacyEngine(accountant="rdp").make_private(
            module=module, optimizer=optimizer, data_loader=loader, noise_multiplier=sigma,
            max_grad_norm=clip_norm, poisson_sampling=True)
        done = 0
        while done < steps:
            for xb, yb in loader:
                optimizer.zero_grad()
                if len(yb):
                    bce(module(xb).squeeze(-1), yb).backward()
                optimizer.step()
                done += 1
                if done == steps:
                    break
        return Model(module)

    return train


def main(argv=None) -> int:
    from privbound.audit.canaries import InputCanary, audit_training

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=500)
    args = ap.parse_args(argv)
    rng = np.random.default_rng(0)
    X = np.c_[rng.uniform(-0.7, 0.7, size=(20, 2)), np.zeros(20)]
    y = (X[:, 0] > 0).astype(float)
    result = audit_training(make_train(), (X, y), InputCanary([0.0, 0.0, 10.0], 1.0), epsilon=2.0, delta=1e-5,
                            trials=args.trials, name="opacus-logistic-input-canary")
    print(result.summary())
    print("threat model:", result.details["threat_model_description"])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
