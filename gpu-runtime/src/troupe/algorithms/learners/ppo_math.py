"""The PPO family's math as pure functions of tensors: per-token rewards, GAE, returns, the clipped
value loss and explained variance. The policy loss is `grpo.policy_loss` with per-token advantages
(loss type "dapo": the token mean over the batch, as PPO implementations aggregate).

Sources of the formulas (cited by the tests, which check them against hand-computed references):
- GAE: Schulman et al. 2016, "High-Dimensional Continuous Control Using Generalized Advantage
  Estimation", eq. 16: A_t = sum_l (gamma * lambda)^l delta_{t+l}, delta_t = r_t + gamma V(s_{t+1}) - V(s_t),
  computed backwards as A_t = delta_t + gamma * lambda * A_{t+1}; returns R_t = A_t + V(s_t).
- The clipped value loss: OpenAI baselines' ppo2 (`vf_loss = .5 * mean(max(vf_losses1, vf_losses2))`),
  which TRL's former PPOTrainer and OpenRLHF also use.
- Advantage whitening over the batch's trained tokens, as TRL's former PPOTrainer and verl's GAE do.

Tokens where the mask is 0 (prompt, padding, other speakers, environment messages) are not time
steps: GAE runs over each row's masked tokens in order, so an actor's turns in a conversation form
one trajectory and the value of its next own token bootstraps the last token of a turn.
"""

from __future__ import annotations

import torch


def terminal_rewards(rewards: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """[B, T]: each row's scalar reward on its last masked token, 0 elsewhere (rows without tokens: all 0)."""
    m = mask.to(torch.float32)
    out = torch.zeros_like(m)
    has = m.sum(dim=1) > 0
    positions = torch.arange(m.shape[1], device=m.device).expand_as(m)
    last = torch.where(m > 0, positions, torch.full_like(positions, -1)).max(dim=1).values
    rows = torch.nonzero(has).squeeze(1)
    out[rows, last[rows]] = rewards.to(torch.float32)[rows]
    return out


def gae(token_rewards: torch.Tensor, values: torch.Tensor, mask: torch.Tensor, gamma: float, lam: float) -> tuple[torch.Tensor, torch.Tensor]:
    """(advantages, returns), both [B, T] and 0 off the mask. The state after a row's last masked token
    is terminal (value 0)."""
    m = mask.to(torch.float32)
    r, v = token_rewards.to(torch.float32), values.to(torch.float32)
    b, t = m.shape
    advantages = torch.zeros_like(m)
    next_value = torch.zeros(b, device=m.device)
    next_adv = torch.zeros(b, device=m.device)
    for i in range(t - 1, -1, -1):
        on = m[:, i] > 0
        delta = r[:, i] + gamma * next_value - v[:, i]
        adv = delta + gamma * lam * next_adv
        advantages[:, i] = torch.where(on, adv, torch.zeros_like(adv))
        next_value = torch.where(on, v[:, i], next_value)
        next_adv = torch.where(on, adv, next_adv)
    returns = (advantages + v) * m
    return advantages, returns


def whiten(x: torch.Tensor, mask: torch.Tensor, eps: float = 1e-8) -> torch.Tensor:
    """(x - mean) / std over the masked entries (population std); 0 off the mask."""
    m = mask.to(x.dtype)
    n = m.sum().clamp(min=1)
    mean = (x * m).sum() / n
    var = (((x - mean) * m) ** 2).sum() / n
    return (x - mean) * torch.rsqrt(var + eps) * m


def value_loss(values: torch.Tensor, old_values: torch.Tensor, returns: torch.Tensor, mask: torch.Tensor, clip: float | None) -> tuple[torch.Tensor, dict[str, float]]:
    """0.5 * masked mean of max((V - R)^2, (V_old + clip(V - V_old, -c, c) - R)^2); no clipping when
    `clip` is None. Returns the loss and its clip fraction (share of tokens where the clipped term is larger)."""
    m = mask.to(values.dtype)
    unclipped = (values - returns) ** 2
    if clip is None:
        per_token, clip_frac = unclipped, 0.0
    else:
        clipped_values = old_values + torch.clamp(values - old_values, -clip, clip)
        clipped = (clipped_values - returns) ** 2
        per_token = torch.maximum(unclipped, clipped)
        with torch.no_grad():
            clip_frac = float(((clipped > unclipped).to(m.dtype) * m).sum() / m.sum().clamp(min=1))
    loss = 0.5 * (per_token * m).sum() / m.sum().clamp(min=1)
    return loss, {"value/clip_frac": clip_frac}


def explained_variance(values: torch.Tensor, returns: torch.Tensor, mask: torch.Tensor) -> float:
    """1 - Var(R - V) / Var(R) over the masked entries; nan when the returns do not vary (Var(R) < 1e-12)."""
    m = mask.to(torch.float32)
    n = m.sum().clamp(min=1)

    def var(x: torch.Tensor) -> torch.Tensor:
        mean = (x * m).sum() / n
        return (((x - mean) * m) ** 2).sum() / n

    var_r = var(returns.to(torch.float32))
    if float(var_r) < 1e-12:  # equal returns (up to float rounding): nothing to explain
        return float("nan")
    return float(1 - var(returns.to(torch.float32) - values.to(torch.float32)) / var_r)


def turn_gae(turn_rewards: list[float], turn_values: list[float], gamma: float, lam: float) -> tuple[list[float], list[float]]:
    """GAE over one actor's turns in a conversation (MAPPO's time steps): (advantages, returns) per turn."""
    advantages = [0.0] * len(turn_values)
    next_value, next_adv = 0.0, 0.0
    for k in range(len(turn_values) - 1, -1, -1):
        delta = turn_rewards[k] + gamma * next_value - turn_values[k]
        next_adv = delta + gamma * lam * next_adv
        advantages[k] = next_adv
        next_value = turn_values[k]
    return advantages, [a + v for a, v in zip(advantages, turn_values)]
