"""privbound.audit.membership: record-level membership inference -- LiRA, RMIA and the loss-threshold baseline,
with per-record risk and an epsilon lower bound.

"Which records of my training set does this trained model expose, and how strong is the best
membership attack?" -- for any scikit-learn classifier and for the papers' learners, trained with or
without differential privacy.

Attacks (each a pure function of per-record model outputs, so thousands of reference models are one
call to the trial engine and every attack reuses them):

* **LiRA** -- the likelihood-ratio attack of Carlini, Chien, Nasr, Song, Terzis & Tramer, "Membership
  inference attacks from first principles" (IEEE S&P 2022, arXiv:2112.03570): the logit-scaled
  confidence ``phi = log p_y - log sum_{y' != y} p_y'`` of a record under reference models trained
  with (IN) and without (OUT) it is fitted by one Gaussian each; the online score is the log
  likelihood ratio ``log N(phi; mu_in, s_in) - log N(phi; mu_out, s_out)`` of the target model's
  ``phi``, the offline score the one-sided test ``log Pr[Z < phi]``, ``Z ~ N(mu_out, s_out)``
  (OUT models only). With few reference models the per-record variances are replaced by one global
  (pooled within-record) variance, as the paper recommends below 64 models.
* **RMIA** -- the robust membership inference attack of Zarifzadeh, Liu, Mireshghallah & Shokri,
  "Low-cost high-power membership inference attacks" (ICML 2024, arXiv:2312.03262): pairwise
  likelihood ratios ``LR(x, z) = (Pr(x|theta)/Pr(x)) / (Pr(z|theta)/Pr(z))`` against population
  records ``z`` that no model trained on, ``Pr(x)`` the average of ``Pr(x|theta')`` over reference
  models, and the score ``Pr_z[LR(x, z) >= gamma]``. Offline (OUT models only)
  ``Pr(x) = ((1 + a) Pr_OUT(x) + (1 - a)) / 2``, with ``a`` chosen on the reference models alone
  (one of them plays the target). Ties of the score are broken by ``Pr(x|theta)/Pr(x)``.
* **Loss threshold** -- Yeom, Giacomelli, Fredrikson & Jha, "Privacy risk in machine learning:
  analyzing the connection to overfitting" (IEEE CSF 2018): the score is minus the cross-entropy loss.

The game (one run of :func:`membership_audit`). The data are split once (seeded) into a *pool* of
candidate members and a *population* that no model trains on. ``n_reference`` reference models
(the attacker's own, membership known) and ``n_targets`` target models (membership secret) are
trained, each on the pool records it keeps: every (model, record) keeps the record independently
with probability 1/2. Under ``add-or-remove-one`` a model's training set is the kept records (the
two worlds of one record differ by adding or removing it); under ``replace-one`` slot ``i`` of a
fixed-size training set holds pool record ``i`` when kept and filler record ``i`` otherwise (the
worlds differ by replacing one record), for learners whose guarantee is stated for replacement.

The epsilon lower bound. Every (target model, pool record) pair is a canary of the one-run game of
Steinke, Nasr & Jagielski (NeurIPS 2023, arXiv:2305.08846): its inclusion bit is an independent fair
coin, changing it changes one target model's training set by one neighbouring step, and the attacker's
guesses (the highest / lowest pooled scores) are a post-processing of the target models and of
reference models independent of the bits. So the number of correct guesses among ``r`` is dominated
as in their Theorem 3.1 (with the delta extension of :mod:`privbound.audit.one_run`), although
records of one model are dependent -- which rules out a Clopper--Pearson bound on pooled TPR and FPR.
The attack and the guess rule (how many guesses, one- or two-sided) are chosen on a quarter of the
target models and evaluated, as one test at level ``1 - confidence``, on the others: those are
trained independently of the first, so the choice is fixed with respect to their coins and the bound
holds with probability at least ``confidence`` (with one target model: Bonferroni over every rule of
every attack). The delta term of the bound grows with the number of canaries ``m`` (it is
``2 m delta`` times a tail ratio), so the bound needs many correct guesses when delta > 0.

Metrics (descriptive): the pooled ROC, TPR at FPR 1e-3 and 1e-2 with two-sided Clopper--Pearson
intervals on the counts at the chosen threshold (treating (model, record) pairs as independent, the
convention of the membership-inference literature; the threshold is chosen on the same scores),
AUC with the Hanley--McNeil (1982) interval, the advantage ``max_t TPR - FPR`` with the interval
from the Clopper--Pearson bounds of its two rates. Per-record risk: the TPR at ``risk_fpr`` of the
per-record Gaussian test of LiRA calibrated on all reference models,
``1 - Phi((mu_out + s_out z_{1 - risk_fpr} - mu_in) / s_in)``.

Modules: :mod:`.game` (the game, model training and per-record outputs), :mod:`.attacks` (LiRA, RMIA,
the loss threshold, per-record risk), :mod:`.metrics` (ROC, TPR at FPR, AUC, advantage), :mod:`.bound`
(the epsilon lower bound), :mod:`.result` (:class:`MembershipResult`), :mod:`.auditing`
(:func:`membership_audit`). The membership targets live with every other target, in
:mod:`privbound.audit.targets.membership`.
"""

from privbound.audit.membership.attacks import ATTACKS, lira_scores, loss_scores, record_risk, rmia_scores
from privbound.audit.membership.auditing import membership_audit
from privbound.audit.membership.bound import guess_grid, membership_epsilon_lower_bound
from privbound.audit.membership.game import MembershipGame, ModelOutputs, derived_seed, model_statistics, train_models
from privbound.audit.membership.metrics import AttackMetrics, FprPoint, attack_metrics
from privbound.audit.membership.result import MembershipResult

__all__ = [
    "ATTACKS",
    "AttackMetrics",
    "FprPoint",
    "MembershipResult",
    "ModelOutputs",
    "MembershipGame",
    "membership_audit",
    "train_models",
    "derived_seed",
    "model_statistics",
    "lira_scores",
    "rmia_scores",
    "loss_scores",
    "record_risk",
    "attack_metrics",
    "membership_epsilon_lower_bound",
    "guess_grid",
]
