"""vdn and qmix: per-agent critics whose values are mixed into the team's value (value_mixing.py).

Every trainable actor of a collaborative environment has its own critic (critic.py, on its base, reading only
its own view: its system prompt, the user prompt and the messages it sees). The time steps are the episode's
turns: before turn t each agent's critic values its own view as it then is, and the team value
V_tot(t) = sum_i V_i(t) (vdn) or the monotonic mix QMIX(V_1(t)..V_n(t); s_t) (qmix), where the global state s_t
is the agents' critics' hidden states at that moment (every agent's observation, as QMIX's state). The team
return (the mean of the members' rewards of the episode, the shared reward when they share one) is the reward of
the last turn; GAE over the turns with V_tot gives each turn's advantage, which every token of that turn takes,
whoever spoke it (each agent's advantage from the mixed value). After the actors' updates the critics and the
mixer fit the turns' returns together: one loss, 1/2 (V_tot - R)^2 over the turns, through the mix.

The critics train together in one process (their gradients meet in the mix): one rank only.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import torch

from ..learner_base import LearnerSetup, register_learner
from ..on_policy import OnPolicyLearner
from ..value_mixing import QMixer, vdn_mix
from . import ppo
from .critic import Critic, build_critic
from .ppo_math import explained_variance, turn_gae, whiten


@dataclass
class AgentView:
    """One agent's views of an environment's episodes: token ids, and where each turn's state is valued."""

    input_ids: torch.Tensor  # [N, L]
    attention: torch.Tensor  # [N, L]
    positions: torch.Tensor  # [N, T] the last token of the view before turn t


@dataclass
class TeamStep:
    """What an environment's team needs between `prepare` and `fit`."""

    agents: list[str]
    views: dict[str, AgentView]
    turn_mask: torch.Tensor  # [N, T] 1 where the episode has a turn t
    returns: torch.Tensor  # [N, T] GAE's returns per turn
    values: torch.Tensor  # [N, T] the mixed values at the rollout
    per_actor: dict[str, list[list[tuple[int, float]]]]  # actor -> per episode [(message index, advantage)]


def encode_view(critic: Critic, episode: Any, agent: str, turns: list[int]) -> tuple[list[int], list[int]]:
    """The agent's own view in its critic's tokens, and the last position before each of `turns` (message
    indices): its system prompt and the user prompt, then every message it sees."""
    tok = critic.tokenizer
    system = episode.systems.get(agent)
    ids = tok.encode((f"{agent} knows: {system}\n" if system else "") + episode.user, True) or [0]
    before: dict[int, int] = {}
    for k, m in enumerate(episode.messages):
        before[k] = len(ids) - 1
        if episode.sees_message(agent, m):
            ids += tok.encode(f"\n{m.actor}: {m.text}", False)
    return ids, [before[k] for k in turns]


def values_and_states(critic: Critic, view: AgentView) -> tuple[torch.Tensor, torch.Tensor]:
    """The critic's value [N, T] and hidden state [N, T, H] at each turn's position of the agent's view."""
    model = critic.model
    with critic.backend.forward_context():
        position_ids = (view.attention.cumsum(dim=1) - 1).clamp(min=0)
        hidden = model.body(input_ids=view.input_ids, attention_mask=view.attention, position_ids=position_ids, use_cache=False).last_hidden_state
        values = model.head(hidden).float()[..., 0]
    rows = torch.arange(view.positions.shape[0], device=values.device).unsqueeze(1)
    return values.gather(1, view.positions), hidden.float()[rows, view.positions]


def team_return(episode: Any, agents: list[str]) -> float:
    return sum(float(episode.rewards[a]) for a in agents) / len(agents)


class ValueDecompositionLearner(OnPolicyLearner):
    """The shared machinery of vdn and qmix; `mix` is theirs."""

    def build_critics(self, setup: LearnerSetup) -> ppo.Critics:
        if setup.ctx.distributed:
            raise ValueError(f'algorithm.name "{setup.run.algorithm.name}": the per-agent critics train together through the mix in one process; run on one rank')
        settings = ppo.ppo_settings(replace(setup.run.algorithm, value_norm=False))
        critics = ppo.Critics(settings)
        micro = setup.run.trainer.micro_batch_size
        self.teams: dict[str, list[str]] = {}
        for env in setup.environments:
            section = setup.run.environments[env.index]
            team = [a for a in section.actors if a in setup.actors and setup.actors[a].trainable]
            if section.kind != "collaborative" or len(team) < 2:
                continue
            self.teams[env.name] = team
            for name in team:
                if name not in critics.by_actor:
                    actor = setup.actors[name]
                    critics.by_actor[name] = build_critic(f"{name}/critic", actor, [name], settings.critic_lr, False, setup.ctx, setup.work_dir, micro)
        teams = "; ".join(f"{e}: " + ", ".join(t) for e, t in self.teams.items())
        setup.log("info", f"{settings.name}: a critic per trainable actor, mixed into the team value of each environment ({teams})")
        self.steps: dict[str, TeamStep] = {}
        return critics

    # ------------------------------------------------------------------ the mix (vdn: sum; qmix: a mixer)
    def mix(self, env: str, values: torch.Tensor, states: torch.Tensor) -> torch.Tensor:
        """[N, T, n] agents' values and [N, T, S] global states -> [N, T] team values."""
        raise NotImplementedError

    def mixer_parameters(self) -> list[torch.nn.Parameter]:
        return []

    # ------------------------------------------------------------------ phases
    def _mixed(self, env: str, step: TeamStep) -> torch.Tensor:
        assert self.critics is not None
        outs = [values_and_states(self.critics.by_actor[a], step.views[a]) for a in step.agents]
        values = torch.stack([v for v, _ in outs], dim=-1)
        states = torch.cat([h for _, h in outs], dim=-1).detach()  # the mixer reads the state; it does not train the critics' bodies
        return self.mix(env, values, states)

    def prepare(self, step: int, batch: Any) -> None:
        assert self.critics is not None
        s = self.critics.settings
        self.steps = {}
        self.residency.for_rollout(c.name for c in self.critics.all())
        for conv in batch.conversations:
            agents = self.teams.get(conv.env.name)
            if agents is None:
                continue
            turns = [[k for k, m in enumerate(e.messages) if m.role == "assistant"] for e in conv.episodes]
            width = max(1, max(len(t) for t in turns))
            n = len(conv.episodes)
            turn_mask = torch.zeros((n, width))
            for i, t in enumerate(turns):
                turn_mask[i, : len(t)] = 1
            views: dict[str, AgentView] = {}
            for a in agents:
                critic = self.critics.by_actor[a]
                encoded = [encode_view(critic, e, a, t) for e, t in zip(conv.episodes, turns)]
                length = max(len(ids) for ids, _ in encoded)
                input_ids, attention = torch.zeros((n, length), dtype=torch.long), torch.zeros((n, length), dtype=torch.long)
                positions = torch.zeros((n, width), dtype=torch.long)
                for i, (ids, before) in enumerate(encoded):
                    input_ids[i, : len(ids)], attention[i, : len(ids)] = torch.tensor(ids), 1
                    positions[i, : len(before)] = torch.tensor(before, dtype=torch.long)
                views[a] = AgentView(input_ids.to(critic.device), attention.to(critic.device), positions.to(critic.device))
            team = TeamStep(agents, views, turn_mask, torch.zeros((n, width)), torch.zeros((n, width)), {a: [] for a in conv.env.actors})
            with torch.no_grad():
                for c in self.critics.all():
                    c.model.eval()
                mixed = self._mixed(conv.env.name, team).cpu() * turn_mask
            for i, (e, t) in enumerate(zip(conv.episodes, turns)):
                values = mixed[i, : len(t)].tolist()
                rewards = [0.0] * len(t)
                if t:
                    rewards[-1] = team_return(e, agents)
                advantages, returns = turn_gae(rewards, values, s.gamma, s.lam)
                team.returns[i, : len(t)] = torch.tensor(returns)
                team.values[i, : len(t)] = torch.tensor(values)
                for actor in team.per_actor:
                    team.per_actor[actor].append([(k, adv) for k, adv in zip(t, advantages) if e.messages[k].actor == actor])
            self.steps[conv.env.name] = team

    def targets(self, name: str, rows: Any, mask: torch.Tensor, rewards: list[float], batch: Any) -> ppo.Targets:
        """Every token of a turn takes the turn's advantage (from the mixed value), whitened over the actor's tokens."""
        advantages = torch.zeros(mask.shape, dtype=torch.float32, device=mask.device)
        row = 0
        for conv in batch.conversations:
            if name not in conv.env.actors:
                continue
            team = self.steps.get(conv.env.name)
            if team is None:
                raise RuntimeError(f'{self.critics.settings.name if self.critics else ""}: environment "{conv.env.name}" has no team of 2 or more trainable actors')
            for i, (e, turn_advs) in enumerate(zip(conv.episodes, team.per_actor[name])):
                per_token = [a for k, a in turn_advs for _ in range(len(e.messages[k].ids))]
                own = torch.nonzero(mask[row] > 0).squeeze(1)
                if len(own) != len(per_token):
                    raise RuntimeError(f'actor "{name}" has {len(own)} trained tokens in episode {i} of "{conv.env.name}" but its turns hold {len(per_token)}')
                advantages[row, own] = torch.tensor(per_token, dtype=torch.float32, device=mask.device)
                row += 1
        white = whiten(advantages, mask)
        m = mask.to(torch.float32)
        per_row = ((white * m).sum(dim=1) / m.sum(dim=1).clamp(min=1)).tolist()
        steps = [t for c in batch.conversations if name in c.env.actors and (t := self.steps.get(c.env.name)) is not None]
        values = torch.cat([t.values[t.turn_mask > 0] for t in steps])
        returns = torch.cat([t.returns[t.turn_mask > 0] for t in steps])
        ev = explained_variance(values, returns, torch.ones_like(values))
        return ppo.Targets(white, per_row, None, float(returns.mean()), ev)

    def fit(self, fits: dict[str, list[ppo.CriticBatch]]) -> dict[str, dict[str, float]]:
        """The critics and the mixer fit each team's turn returns through the mix (1/2 squared error)."""
        assert self.critics is not None
        out: dict[str, dict[str, float]] = {}
        for env, team in self.steps.items():
            critics = [self.critics.by_actor[a] for a in team.agents]
            self.residency.for_update(critics[0].name, also=[c.name for c in critics[1:]])
            training = self.actors[team.agents[0]].section.training
            returns = team.returns.to(critics[0].device)
            turn_mask = team.turn_mask.to(critics[0].device)
            losses = []
            for c in critics:
                c.model.train()
            for _ in range(training.iterations_per_batch):
                for c in critics:
                    c.backend.zero_grad()
                for p in self.mixer_parameters():
                    p.grad = None
                mixed = self._mixed(env, team)
                loss = 0.5 * (((mixed - returns) ** 2) * turn_mask).sum() / turn_mask.sum().clamp(min=1)
                loss.backward()
                for a, c in zip(team.agents, critics):
                    c.backend.clip(self.actors[a].section.training.max_grad_norm)
                    c.backend.step()
                self.step_mixer(training.max_grad_norm)
                losses.append(float(loss.detach()))
            self.residency.observe("update")
            for a in team.agents:
                out[a] = {"value/loss": sum(losses) / len(losses)}
        return out

    def step_mixer(self, max_grad_norm: float) -> None:
        pass


@register_learner("vdn")
class VdnLearner(ValueDecompositionLearner):
    def mix(self, env: str, values: torch.Tensor, states: torch.Tensor) -> torch.Tensor:
        return vdn_mix(values)


@register_learner("qmix")
class QmixLearner(ValueDecompositionLearner):
    def build_critics(self, setup: LearnerSetup) -> ppo.Critics:
        critics = super().build_critics(setup)
        embed = int(setup.run.algorithm.qmix.mixing_embed_dim)
        self.mixers: dict[str, QMixer] = {}
        params: list[torch.nn.Parameter] = []
        for env, team in self.teams.items():
            first = critics.by_actor[team[0]]
            state_dim = sum(critics.by_actor[a].model.head.in_features for a in team)
            self.mixers[env] = QMixer(len(team), state_dim, embed).to(first.device)
            params += list(self.mixers[env].parameters())
        first_actor = setup.actors[next(iter(self.teams.values()))[0]] if self.teams else None
        lr = critics.settings.critic_lr or (first_actor.section.training.learning_rate if first_actor else 1e-3)
        self.mixer_optimizer = torch.optim.Adam(params, lr=lr) if params else None
        return critics

    def mix(self, env: str, values: torch.Tensor, states: torch.Tensor) -> torch.Tensor:
        return self.mixers[env](values, states)

    def mixer_parameters(self) -> list[torch.nn.Parameter]:
        return [p for m in self.mixers.values() for p in m.parameters()]

    def step_mixer(self, max_grad_norm: float) -> None:
        if self.mixer_optimizer is not None:
            torch.nn.utils.clip_grad_norm_(self.mixer_parameters(), max_grad_norm)
            self.mixer_optimizer.step()

    def state_dict(self) -> dict[str, Any]:
        return {
            **super().state_dict(),
            "mixers": {env: m.state_dict() for env, m in self.mixers.items()},
            "mixer_optimizer": self.mixer_optimizer.state_dict() if self.mixer_optimizer is not None else None,
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        super().load_state_dict(state)
        for env, m in self.mixers.items():
            m.load_state_dict(state["mixers"][env])
        if self.mixer_optimizer is not None:
            self.mixer_optimizer.load_state_dict(state["mixer_optimizer"])
