"""`from troupe import Environment`: an environment written as a Python class.

    from troupe import Environment

    class Guess(Environment):
        def reset(self, episode):                 # episode.row is the dataset row
            episode.state["secret"] = int(episode.row["secret"])
            return "Guess my number (0-9)."       # the opening message (None: the spec's prompt)

        def step(self, episode, message):         # after every actor message
            if message.text.strip() == str(episode.state["secret"]):
                episode.finish({message.actor: 1.0})
                return "correct"
            return "higher" if int(episode.state["secret"]) > len(message.text) else "lower"

Named in the spec as `{kind: "python", entrypoint: "my_envs:Guess"}` (a module importable on the
runner, or `path/to/file.py:Guess`, relative to the run folder). The runtime (acting.py) batches
each turn across episodes: `next_speaker` picks who speaks, the actor samples, `step` answers;
what `step` returns enters the conversation as the environment's message (context for every
actor, never a training target, shown in transcripts with role "environment"). Per-actor loss
masks and transcripts are the same as in the built-in environments.

Handles the runtime sets before `setup()`:
    self.name, self.actors (names, in spec order), self.max_turns, self.params (the spec's `params`),
    self.handles[actor].generate(prompt_or_prompts, max_new_tokens=None) -> str | list[str]
        (every actor of the run; text in, text out, sampled with its own settings. What an actor
        says through a handle is not trained on: only its turns in the episode are.)
    self.rewards[name](prompt, completion, row) -> float  (the spec's rewards of this environment)
    self.sandbox: troupe.sandbox.Sandbox with the run's `sandbox` limits (run untrusted code there)
    self.log(level, message): a line in the run's log
An environment object is trusted code, run in the trainer's process (like `@reward` functions);
code that a model wrote must go through `self.sandbox`.

Or the environment plays whole episodes itself, as the Actors library's environments do: override
`async def generate(self, batch)` (environment_generate.py has the types and how the runtime trains on it):

    class Echo(Environment):
        async def generate(self, batch):                      # batch: G samples per row, groups contiguous
            said = await batch.actors["bob"].generate([f"say {c}:" for c in batch["letter"]])
            return {"bob": [Sample.of(g, reward=float(g.text[:1] == c)) for g, c in zip(said, batch["letter"])]}

Then `reset`, `next_speaker`, `step` and `score` are not called: the ids and rewards `generate` returned
are exactly what each actor trains on (its completion ids are the loss targets, the prompt ids context).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Sequence

if TYPE_CHECKING:
    from .collaborative import Episode, Message
    from .environment_generate import GenerateBatch, Sample


@dataclass
class Reply:
    """An environment message. `to`: the actors who see it (None: every actor)."""

    text: str
    to: list[str] | None = None
    speaker: str | None = None  # the name shown in the conversation; default `Environment.speaker`


class Environment:
    """Subclass and override what you need; every method has a working default."""

    # The name environment messages are shown under (`environment: ...` in the actors' context).
    speaker: str = "environment"
    name: str = ""
    actors: list[str]
    max_turns: int = 16
    params: dict[str, Any]
    handles: dict[str, Any]
    rewards: dict[str, Callable[..., float]]
    sandbox: Any = None

    log_sink: Callable[[str, str], None] | None = None  # the run's log (set by the runtime)

    def log(self, level: str, message: str) -> None:
        """A line in the run's log ("info", "warning" or "error")."""
        if self.log_sink is not None:
            self.log_sink(level, message)
        else:
            import sys

            print(f"[{level}] {message}", file=sys.stderr)

    def setup(self) -> None:
        """Called once, after the handles are set and before the first episode."""

    def reset(self, episode: "Episode") -> str | list[str | Reply] | None:
        """A new episode (`episode.row`, `episode.state` is yours). Return the opening message, or
        None to keep the one the spec's `prompt` rendered; or a list: the opening (or None), then
        messages of the environment that follow it, as `step` returns them."""
        return None

    def next_speaker(self, episode: "Episode", turn: int) -> str | None:
        """Who speaks at actor turn `turn` (0-based); None ends the episode. Default: the drawn round
        spec flattened (`A -> (B & C)` is A, B, C) when the spec has one, else the actors in turn."""
        if episode.done:
            return None
        if episode.schedule:
            flat = [a for group in episode.schedule for a in group]
            return flat[turn] if turn < len(flat) else None
        return self.actors[turn % len(self.actors)]

    def step(self, episode: "Episode", message: "Message") -> str | Reply | list[Reply] | None:
        """After `message.actor` spoke `message.text`: the environment's answer (None: silent).
        Call `episode.finish(...)` to end the episode."""
        return None

    def step_many(self, pairs: Sequence[tuple["Episode", "Message"]]) -> list[str | Reply | list[Reply] | None]:
        """Every episode of one turn at once; override to answer them in parallel."""
        return [self.step(e, m) for e, m in pairs]

    def score(self, episode: "Episode") -> dict[str, float | dict[str, float]] | None:
        """Rewards at the end: actor -> number (the component "environment") or {component: number}.
        They add to the spec's rewards of this environment (weight 1). None: only those."""
        return None

    def metrics(self, episodes: Sequence["Episode"]) -> dict[str, float]:
        """Numbers about a training step's episodes (after `score`), reported with the metrics of each of
        its actors, e.g. `{"tools/calls": 1.5}`; name them `<area>/<what>` so the run page groups them."""
        return {}

    async def generate(self, batch: "GenerateBatch") -> "dict[str, Sequence[Sample]]":
        """Plays a step's episodes in one go: per actor, one `Sample` per episode of `batch` (in its order),
        the prompt and completion token ids the actor trains on and its reward. An actor left out (or a
        None in its list) trains on nothing in that episode. Override it, or the turn methods above."""
        raise NotImplementedError

    @classmethod
    def generates(cls) -> bool:
        """Whether this class plays its episodes through `generate` (it overrides it)."""
        return cls.generate is not Environment.generate

    def close(self) -> None:
        """The run is over."""
