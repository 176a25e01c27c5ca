"""The generative models of the latent-space base generators: a VAE conditioned on what a
plan cannot change (CCHVAE, CLUE) and a conditional subspace VAE (CRUDS).

Both see a profile in the unit cube, u = (x - lo) / M (lo, M: the recourse role's training
minimum and range), split into the globally actionable part u_A (what plans may change,
what the models encode and decode) and the rest u_C (immutable and consequence-only
features: conditioning inputs the decoder is given, never outputs). Decoding therefore
never moves an immutable feature.

**TabularVAE** (Kingma & Welling's VAE, conditioned as CCHVAE (Pawelczyk et al.) does on
the immutables): q(z | u_A) = N(mu(u_A), diag exp(logvar(u_A))), z in R^latent;
decoder u_A' = sigmoid(g(z, u_C)). Trained on

    L = BCE(u_A', u_A) summed over features  +  beta_e * KL(q(z | u_A) || N(0, I)),

beta_e annealed linearly from 0 to ``kl_weight`` over the epochs (as CARLA's VAE does),
Adam with weight decay; ``epochs``, or more on a small data set (at least ``min_updates``
optimizer steps).

**CSVAE** (Klys et al., the conditional subspace VAE CRUDS (Downs et al.) is built on):
two latent spaces, z (``latent``: everything but the label) and w (``w_dim``: the label's
subspace). q(z | u_A), q(w | u_A, y), a learned prior p(w | y), decoder
u_A' = sigmoid(g(z, w, u_C)), and an adversary a(y | z, u_C) that tries to read the label
from z. The model minimizes

    40 * MSE(u_A', u_A) + 0.2 * KL(q(z) || N(0, I)) + 1 * KL(q(w | u_A, y) || p(w | y))
        + 110 * E[sum_y a(y) log a(y)]        (z made uninformative of y),

the adversary minimizes 100 * CE(a(. | z, u_C), y) on its own parameters (the weights are
CARLA's CSVAE loss weights; each term averaged over the batch).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from typing import Any

import torch
from torch import Tensor, nn

from engine.networks import mlp

Report = Callable[[int, int, str], None]


@dataclass(frozen=True)
class VAEConfig:
    """Hyper-parameters of TabularVAE (module docstring); ``reduced`` for tests."""

    hidden: tuple[int, ...] = (64, 32)
    latent: int = 8
    kl_weight: float = 0.3
    epochs: int = 15
    lr: float = 1e-3
    weight_decay: float = 1e-6
    batch_size: int = 128
    min_updates: int = 2000
    seed: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "hidden": list(self.hidden)}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> VAEConfig:
        return cls(**{**d, "hidden": tuple(d["hidden"])})

    def reduced(self) -> VAEConfig:
        return replace(self, epochs=2, min_updates=200)

    def epochs_for(self, n_rows: int) -> int:
        """``epochs``, or more on a small data set: at least ``min_updates`` optimizer steps
        (German Credit's 600 training rows make 5 batches an epoch)."""
        batches = max(1, -(-n_rows // self.batch_size))
        return max(self.epochs, -(-self.min_updates // batches))


@dataclass(frozen=True)
class CSVAEConfig(VAEConfig):
    """Hyper-parameters of the CSVAE (module docstring); ``w_dim`` the label subspace."""

    w_dim: int = 2


def _split(scenario: Any) -> Tensor:
    """(d,) bool: the globally actionable features (what the models encode and decode)."""
    mask = scenario.actionable_mask()
    if not bool(mask.any()):
        raise ValueError(f"scenario {scenario.name!r} has no actionable feature to model")
    return mask


class _UnitModel(nn.Module):
    """Unit-cube scaling and the actionable / conditioning split, as buffers."""

    def __init__(self, lo: Tensor, scale: Tensor, actionable: Tensor) -> None:
        super().__init__()
        self.register_buffer("lo", lo.float())
        self.register_buffer("scale", scale.float().clamp(min=1e-12))
        self.register_buffer("actionable", actionable.bool())

    @property
    def n_act(self) -> int:
        return int(self.actionable.sum())

    @property
    def n_cond(self) -> int:
        return int((~self.actionable).sum())

    def parts(self, x: Tensor) -> tuple[Tensor, Tensor]:
        """(u_A, u_C) of model-unit profiles x."""
        u = (x.float() - self.lo) / self.scale
        return u[:, self.actionable], u[:, ~self.actionable]

    def assemble(self, x: Tensor, u_act: Tensor) -> Tensor:
        """x (model units) with its actionable part replaced by the decoded u_A."""
        out = x.to(u_act.dtype).clone()
        out[:, self.actionable] = self.lo[self.actionable] + u_act * self.scale[self.actionable]
        return out


class TabularVAE(_UnitModel):
    """The conditional VAE (module docstring)."""

    def __init__(self, lo: Tensor, scale: Tensor, actionable: Tensor, cfg: VAEConfig) -> None:
        super().__init__(lo, scale, actionable)
        self.latent = cfg.latent
        self.encoder = mlp(self.n_act, cfg.hidden, 2 * cfg.latent)
        self.decoder = mlp(cfg.latent + self.n_cond, tuple(reversed(cfg.hidden)), self.n_act)

    def encode(self, x: Tensor) -> tuple[Tensor, Tensor]:
        """(mu, logvar) of q(z | u_A) for model-unit profiles x."""
        mu, logvar = self.encoder(self.parts(x)[0]).chunk(2, dim=1)
        return mu, logvar

    def decode(self, z: Tensor, x: Tensor) -> Tensor:
        """Model-unit profiles: x's conditioning part, the actionable part decoded from z."""
        u_act = torch.sigmoid(self.decoder(torch.cat([z, self.parts(x)[1].to(z.dtype)], 1)))
        return self.assemble(x, u_act)

    def loss(self, x: Tensor, beta: float) -> Tensor:
        u_act, u_cond = self.parts(x)
        mu, logvar = self.encoder(u_act).chunk(2, dim=1)
        z = mu + torch.randn_like(mu) * (0.5 * logvar).exp()
        recon = torch.sigmoid(self.decoder(torch.cat([z, u_cond], 1)))
        bce = nn.functional.binary_cross_entropy(recon, u_act.clamp(0, 1), reduction="none")
        return (bce.sum(1) + beta * _kl_std(mu, logvar)).mean()


class CSVAE(_UnitModel):
    """The conditional subspace VAE (module docstring)."""

    def __init__(self, lo: Tensor, scale: Tensor, actionable: Tensor, cfg: CSVAEConfig) -> None:
        super().__init__(lo, scale, actionable)
        self.latent, self.w_dim = cfg.latent, cfg.w_dim
        h = cfg.hidden
        self.enc_z = mlp(self.n_act, h, 2 * cfg.latent)
        self.enc_w = mlp(self.n_act + 2, h, 2 * cfg.w_dim)
        self.prior_w = mlp(2, h, 2 * cfg.w_dim)
        self.decoder = mlp(cfg.latent + cfg.w_dim + self.n_cond, tuple(reversed(h)), self.n_act)
        self.adversary = mlp(cfg.latent + self.n_cond, tuple(reversed(h)), 2)

    def encode_z(self, x: Tensor) -> tuple[Tensor, Tensor]:
        mu, logvar = self.enc_z(self.parts(x)[0]).chunk(2, dim=1)
        return mu, logvar

    def prior(self, label: Tensor) -> tuple[Tensor, Tensor]:
        """(mu, logvar) of p(w | y) for labels (n,) in {0, 1}."""
        mu, logvar = self.prior_w(_one_hot(label)).chunk(2, dim=1)
        return mu, logvar

    def decode(self, z: Tensor, w: Tensor, x: Tensor) -> Tensor:
        u_cond = self.parts(x)[1].to(z.dtype)
        u_act = torch.sigmoid(self.decoder(torch.cat([z, w, u_cond], 1)))
        return self.assemble(x, u_act)

    def losses(self, x: Tensor, y: Tensor) -> tuple[Tensor, Tensor]:
        """(model loss, adversary loss) of a batch (module docstring)."""
        u_act, u_cond = self.parts(x)
        onehot = _one_hot(y)
        z_mu, z_lv = self.enc_z(u_act).chunk(2, dim=1)
        w_mu, w_lv = self.enc_w(torch.cat([u_act, onehot], 1)).chunk(2, dim=1)
        p_mu, p_lv = self.prior_w(onehot).chunk(2, dim=1)
        z = z_mu + torch.randn_like(z_mu) * (0.5 * z_lv).exp()
        w = w_mu + torch.randn_like(w_mu) * (0.5 * w_lv).exp()
        recon = torch.sigmoid(self.decoder(torch.cat([z, w, u_cond], 1)))
        mse = ((recon - u_act) ** 2).mean()
        kl_w = 0.5 * (p_lv - w_lv + (w_lv.exp() + (w_mu - p_mu) ** 2) / p_lv.exp() - 1).sum(1)
        logits = self.adversary(torch.cat([z, u_cond], 1))
        p = torch.softmax(logits, 1)
        negentropy = (p * torch.log_softmax(logits, 1)).sum(1)
        model = (40 * mse + 0.2 * _kl_std(z_mu, z_lv).mean() + kl_w.mean()
                 + 110 * negentropy.mean())
        adv_logits = self.adversary(torch.cat([z.detach(), u_cond], 1))
        adversary = 100 * nn.functional.cross_entropy(adv_logits, y.long())
        return model, adversary


def _kl_std(mu: Tensor, logvar: Tensor) -> Tensor:
    """KL(N(mu, diag exp(logvar)) || N(0, I)) per row."""
    return 0.5 * (mu**2 + logvar.exp() - 1 - logvar).sum(1)


def _one_hot(label: Tensor) -> Tensor:
    return nn.functional.one_hot(label.long().reshape(-1), 2).float()


def _unit(scenario: Any) -> tuple[Tensor, Tensor, Tensor]:
    return scenario.bounds[0], scenario.ranges.clamp(min=1e-12), _split(scenario)


def train_vae(scenario: Any, cfg: VAEConfig, report: Report | None = None
              ) -> tuple[TabularVAE, dict[str, Any]]:
    """A TabularVAE on the recourse role's training split; metrics: validation
    reconstruction error (mean absolute, unit cube) and training seconds."""
    torch.manual_seed(cfg.seed)
    model = TabularVAE(*_unit(scenario), cfg)
    x = scenario.dataset["train"][0].float()
    opt = torch.optim.Adam(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    start = time.perf_counter()
    epochs = cfg.epochs_for(len(x))
    for epoch in range(epochs):
        beta = cfg.kl_weight * epoch / epochs
        for batch in torch.randperm(len(x)).split(cfg.batch_size):
            opt.zero_grad()
            model.loss(x[batch], beta).backward()
            opt.step()
        if report is not None:
            report(epoch + 1, epochs, f"epoch {epoch + 1}/{epochs}")
    model.eval()
    with torch.no_grad():
        xv = scenario.dataset["validation"][0].float()
        err = (model.decode(model.encode(xv)[0], xv) - xv) / model.scale
    return model, {"val_recon_mae": float(err.abs()[:, model.actionable].mean()),
                   "training_seconds": time.perf_counter() - start}


def train_csvae(scenario: Any, cfg: CSVAEConfig, report: Report | None = None
                ) -> tuple[CSVAE, dict[str, Any]]:
    """A CSVAE on the recourse role's training split and its labels; metrics: validation
    reconstruction error, the adversary's validation accuracy (near the majority share when
    z holds no label information) and training seconds."""
    torch.manual_seed(cfg.seed)
    model = CSVAE(*_unit(scenario), cfg)
    x, y = (t.float() for t in scenario.dataset["train"])
    adv = [p for n, p in model.named_parameters() if n.startswith("adversary")]
    rest = [p for n, p in model.named_parameters() if not n.startswith("adversary")]
    opt, opt_adv = (torch.optim.Adam(ps, lr=cfg.lr / 2, weight_decay=cfg.weight_decay)
                    for ps in (rest, adv))
    start = time.perf_counter()
    epochs = cfg.epochs_for(len(x))
    for epoch in range(epochs):
        for batch in torch.randperm(len(x)).split(cfg.batch_size):
            loss, adv_loss = model.losses(x[batch], y[batch])
            opt.zero_grad()
            opt_adv.zero_grad()
            loss.backward(inputs=rest)
            adv_loss.backward(inputs=adv)
            opt.step()
            opt_adv.step()
        if report is not None:
            report(epoch + 1, epochs, f"epoch {epoch + 1}/{epochs}")
    model.eval()
    with torch.no_grad():
        xv, yv = (t.float() for t in scenario.dataset["validation"])
        y1 = yv.round().long()
        w = model.prior(y1)[0]
        err = (model.decode(model.encode_z(xv)[0], w, xv) - xv) / model.scale
        z = model.encode_z(xv)[0]
        u_cond = model.parts(xv)[1]
        acc = (model.adversary(torch.cat([z, u_cond], 1)).argmax(1) == y1).float().mean()
    return model, {"val_recon_mae": float(err.abs()[:, model.actionable].mean()),
                   "adversary_val_accuracy": float(acc),
                   "training_seconds": time.perf_counter() - start}


def build_vae_module(scenario: Any, name: str, cfg: dict[str, Any]) -> nn.Module:
    """An untrained module of artifact ``name`` (``vae`` or ``csvae``) to load weights into."""
    if name == "vae":
        return TabularVAE(*_unit(scenario), VAEConfig.from_dict(cfg))
    return CSVAE(*_unit(scenario), CSVAEConfig.from_dict(cfg))
