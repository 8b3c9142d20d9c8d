"""Experiment ``robust-halfspaces``: the shape of Figure 1 of Ghazi, Kumar, Manurangsi & Nguyen, "Robust and Private
Learning of Halfspaces" (AISTATS 2021, arXiv:2011.14580), Sec. 4 and App. G.3.

``run(dataset="digits", quick=False, out=DIR)`` trains one-vs-rest DP Batch Perceptrons (experimental variant:
one epoch in the paper -- here ``epochs`` passes -- no stopping test, sigma from dp_accounting's RDP accountant for
the *total* budget over the 10 classes) and a DP hinge-loss SVM baseline trained with DP-SGD
(App. G.3: Gaussian noise on summed per-example gradients of norm <= 1, same RDP accounting), and writes

* ``accuracy_vs_epsilon.csv`` (delta = 1e-5; USPS 1e-4 as in the text -- erratum: the caption of Fig. 3 says 1e-5),
* ``accuracy_vs_delta.csv`` (epsilon = 1, delta in {1e-2, 1e-3, 1e-4, 1e-5}),
* ``robust_accuracy_vs_gamma.csv`` (exact linear certified radius, Lemma 22, unnormalised pixel space, for several epsilon),
* ``figure1.png`` (three panels), and returns a summary dict (timings, the tables, and the trends the paper
  reports: accuracy increasing in epsilon, robust accuracy decreasing in gamma).

Mean +- std over 20 trials (3 with ``quick``). Training inputs are unit-normalised (sensitivity 1); test inputs keep
pixels in [0, 1]. Hyper-parameters are fixed in advance (no tuning on test data; the paper's tuning procedure is
[NOT STATED]). ``dataset="mnist"``/``"usps"`` read the files at ``data`` (no download).
"""

from __future__ import annotations

import csv
import os
import time
from typing import Any

import numpy as np

from privbound.learners.robust_halfspaces.data import load_digits_unit, load_mnist_idx, load_usps, unit_normalize
from privbound.learners.robust_halfspaces.perceptron import OneVsRestDPPerceptron, calibrate_gaussian_noise
from privbound.learners.robust_halfspaces.robustness import certified_radius_linear

__all__ = ["run", "dp_svm_one_vs_rest"]

EPSILONS = (0.25, 0.5, 1.0, 2.0, 4.0, 8.0)
DELTAS = (1e-2, 1e-3, 1e-4, 1e-5)
ROBUST_EPSILONS = (0.5, 1.0, 2.0)
METHODS = ("perceptron", "dp-svm")


def _load(dataset: str, data: str | None):
    if dataset == "digits":
        return load_digits_unit()
    if data is None:
        raise ValueError(f"dataset={dataset!r} needs data=PATH (files are not downloaded)")
    if dataset == "mnist":
        return load_mnist_idx(data)
    if dataset == "usps":
        return load_usps(data)
    raise ValueError(f"dataset must be 'digits', 'mnist' or 'usps', got {dataset!r}")


def dp_svm_one_vs_rest(X: np.ndarray, y: np.ndarray, classes: np.ndarray, *, epsilon: float, delta: float, p: float, T: int,
                       lr: float, reg: float, rng: np.random.Generator) -> np.ndarray:
    """DP-SGD on the L2-regularised hinge loss, one-vs-rest, all classes at once (App. G.3).

    Each step takes a Poisson(p) batch, sums the per-example hinge gradients -y x 1[y <w, x> < 1] (norm <= 1 since
    ||x|| <= 1, one per class), adds N(0, sigma^2) noise per class and divides by the expected batch size; sigma is
    calibrated by RDP for len(classes) x T subsampled Gaussian steps at the total (epsilon, delta).
    """
    K, (n, d) = len(classes), X.shape
    sigma = calibrate_gaussian_noise(epsilon, delta, p, T, "rdp", K)
    Y = np.where(y[:, None] == classes[None, :], 1.0, -1.0)  # (n, K)
    W = np.zeros((K, d))
    B = p * n
    for _ in range(T):
        m = rng.random(n) < p
        Xb, Yb = X[m], Y[m]
        active = (Yb * (Xb @ W.T) < 1).astype(float) * Yb  # (b, K)
        grad = -(active.T @ Xb) + rng.normal(0, sigma, (K, d))
        W -= lr * (grad / B + reg * W)
    return W


def _accuracy(W, X, y_idx):
    return float(np.mean(np.argmax(X @ W.T, axis=1) == y_idx))


def _write_csv(path, rows):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


def _train_and_evaluate(configs, Xtr, y_tr, Xte, y_te, n_classes: int, trials: int, gammas: np.ndarray, seed: int,
                        perc_kw: dict[str, Any], svm_kw: dict[str, Any]) -> dict[tuple, dict[str, Any]]:
    """For each (epsilon, delta): ``trials`` runs of both methods (one child seed per configuration), their test
    accuracies, certified robust accuracies at every gamma and the perceptron's total epsilon."""
    results: dict[tuple, dict[str, Any]] = {}
    for ci, (eps, delta) in enumerate(configs):
        child = np.random.default_rng(np.random.SeedSequence([seed, ci]))
        accs = {m: [] for m in METHODS}
        robust = {m: [] for m in METHODS}
        for t in range(trials):
            ovr = OneVsRestDPPerceptron(0.1, epsilon=eps, delta=delta, random_state=child, **perc_kw).fit(Xtr, y_tr)
            W_svm = dp_svm_one_vs_rest(Xtr, y_tr, np.arange(n_classes), epsilon=eps, delta=delta, rng=child, **svm_kw)
            for name, W in (("perceptron", ovr.coef_), ("dp-svm", W_svm)):
                accs[name].append(_accuracy(W, Xte, y_te))
                r = certified_radius_linear(W, Xte, y_te)
                robust[name].append([float(np.mean(r > g)) if g > 0 else float(np.mean(r > 0)) for g in gammas])
        results[(eps, delta)] = dict(acc=accs, robust=robust, total_epsilon=ovr.guarantee_.epsilon)
    return results


def _tables(results, base_delta: float, gammas: np.ndarray, trials: int) -> tuple[list[dict], list[dict], list[dict]]:
    """The rows of the three CSV tables: accuracy vs epsilon, accuracy vs delta, robust accuracy vs gamma."""
    rows_eps = [dict(method=m, epsilon=e, delta=base_delta, mean=np.mean(results[(e, base_delta)]["acc"][m]),
                     std=np.std(results[(e, base_delta)]["acc"][m]), trials=trials)
                for m in METHODS for e in EPSILONS]
    rows_delta = [dict(method=m, epsilon=1.0, delta=dl, mean=np.mean(results[(1.0, dl)]["acc"][m]),
                       std=np.std(results[(1.0, dl)]["acc"][m]), trials=trials)
                  for m in METHODS for dl in DELTAS]
    rows_rob = []
    for m in METHODS:
        for e in ROBUST_EPSILONS:
            R = np.asarray(results[(e, base_delta)]["robust"][m])
            for gi, g in enumerate(gammas):
                rows_rob.append(dict(method=m, epsilon=e, delta=base_delta, gamma=float(g), mean=float(R[:, gi].mean()),
                                     std=float(R[:, gi].std()), trials=trials))
    return rows_eps, rows_delta, rows_rob


def _plot(path: str, rows_eps, rows_delta, rows_rob, base_delta: float, name: str, trials: int) -> None:
    """Figure 1's three panels: accuracy vs epsilon, accuracy vs delta, the perceptron's robust accuracy vs gamma."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(1, 3, figsize=(15, 4.2))
    for m, style in (("perceptron", "-o"), ("dp-svm", "--s")):
        r = [x for x in rows_eps if x["method"] == m]
        ax[0].errorbar([x["epsilon"] for x in r], [x["mean"] for x in r], [x["std"] for x in r], fmt=style, label=m, capsize=3)
        r = [x for x in rows_delta if x["method"] == m]
        ax[1].errorbar([x["delta"] for x in r], [x["mean"] for x in r], [x["std"] for x in r], fmt=style, label=m, capsize=3)
    for e in ROBUST_EPSILONS:
        r = [x for x in rows_rob if x["method"] == "perceptron" and x["epsilon"] == e]
        ax[2].errorbar([x["gamma"] for x in r], [x["mean"] for x in r], [x["std"] for x in r], fmt="-", label=f"eps={e:g}", capsize=2)
    ax[0].set(xscale="log", xlabel="epsilon", ylabel="test accuracy", title=f"(a) accuracy vs epsilon, delta={base_delta:g}")
    # Panel (a) spans 1.5 decades: label the epsilons of the grid in plain numbers, no minor labels.
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter

    ax[0].xaxis.set_major_locator(FixedLocator(EPSILONS))
    ax[0].xaxis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:g}"))
    ax[0].xaxis.set_minor_formatter(NullFormatter())
    ax[1].set(xscale="log", xlabel="delta", ylabel="test accuracy", title="(b) accuracy vs delta, epsilon=1")
    ax[2].set(xlabel="gamma (L2, pixel space)", ylabel="certified robust accuracy", title="(c) DP Batch Perceptron robust accuracy")
    for a in ax:
        a.legend()
        a.grid(alpha=0.3)
    fig.suptitle(f"robust-halfspaces Figure 1 shape on {name} (mean +- std over {trials} trials)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def run(*, dataset: str = "digits", quick: bool = False, out: str | os.PathLike, data: str | None = None, seed: int = 0) -> dict:
    """Run the experiment; write CSV tables and PNG plots into ``out``; return a summary dict."""
    from scipy import stats

    start = time.perf_counter()
    os.makedirs(out, exist_ok=True)
    ds = _load(dataset, data)
    classes = np.unique(ds.y_train)
    y_tr = np.searchsorted(classes, ds.y_train)
    y_te = np.searchsorted(classes, ds.y_test)
    Xtr = unit_normalize(ds.X_train)
    Xte = ds.X_test  # unnormalised pixels in [0, 1] at evaluation
    n = len(y_tr)
    trials = 3 if quick else 20
    batch, epochs = 50, 5
    p = min(1.0, batch / n)
    T = int(round(epochs / p))
    base_delta = 1e-4 if dataset == "usps" else 1e-5
    gammas = np.linspace(0.0, 1.5, 16)
    perc_kw = dict(sampling_rate=p, n_iter=T, margin_ratio=1.0)
    svm_kw = dict(p=p, T=T, lr=1.0, reg=1e-3)

    configs = sorted({(e, base_delta) for e in EPSILONS} | {(1.0, dl) for dl in DELTAS})
    results = _train_and_evaluate(configs, Xtr, y_tr, Xte, y_te, len(classes), trials, gammas, seed, perc_kw, svm_kw)
    rows_eps, rows_delta, rows_rob = _tables(results, base_delta, gammas, trials)
    _write_csv(os.path.join(out, "accuracy_vs_epsilon.csv"), rows_eps)
    _write_csv(os.path.join(out, "accuracy_vs_delta.csv"), rows_delta)
    _write_csv(os.path.join(out, "robust_accuracy_vs_gamma.csv"), rows_rob)
    _plot(os.path.join(out, "figure1.png"), rows_eps, rows_delta, rows_rob, base_delta, ds.name, trials)

    perc_eps = [x["mean"] for x in rows_eps if x["method"] == "perceptron"]
    rob = {e: [x["mean"] for x in rows_rob if x["method"] == "perceptron" and x["epsilon"] == e] for e in ROBUST_EPSILONS}
    summary = dict(
        dataset=ds.name, quick=quick, trials=trials, n_train=n, n_test=len(y_te), sampling_rate=p, steps=T,
        accuracy_vs_epsilon=rows_eps, accuracy_vs_delta=rows_delta,
        robust_accuracy_at_gamma0=dict((e, rob[e][0]) for e in ROBUST_EPSILONS),
        trend_accuracy_vs_epsilon_spearman=float(stats.spearmanr(EPSILONS, perc_eps)[0]),
        trend_robust_decreasing_in_gamma=all(np.all(np.diff(rob[e]) <= 1e-12) for e in ROBUST_EPSILONS),
        perceptron_minus_svm_mean_accuracy=float(np.mean([a["mean"] - b["mean"] for a, b in zip(rows_eps[:len(EPSILONS)], rows_eps[len(EPSILONS):])])),
        total_epsilon_reported=dict((f"{k[0]:g},{k[1]:g}", v["total_epsilon"]) for k, v in results.items()),
        files=sorted(os.listdir(out)), wall_seconds=time.perf_counter() - start,
    )
    return summary
