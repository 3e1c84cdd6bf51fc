"""Debate and majority vote: several actors answer, a judge or a vote decides, and each actor's
reward follows the outcome. Pure functions of a conversation (the list conversation-scope rewards
get: `{"actor", "content"}` dicts, the user prompt first), so they are builtin rewards
(`majority_vote`, `debate_verdict`) usable in any multi-actor environment.

An actor's answer is its last message in the conversation, read by `extract`:
- "text": the whole message, stripped, lower-cased, inner whitespace collapsed;
- "last_number": the last number in it (`1,000` -> 1000; `3.50` -> 3.5); none -> no answer;
- "letter": its first letter A-Z (multiple choice), upper-cased; none -> no answer.
An actor with no message, or whose message yields no answer, casts no vote.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any, Mapping, Sequence

Conversation = Sequence[Mapping[str, str]]
EXTRACTORS = ("text", "last_number", "letter")
VOTE_MODES = ("agree", "team")

_NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?|-?\.\d+")


def extract_answer(text: str, extract: str) -> str | None:
    """The answer a message gives, normalised for comparison (None: it gives none)."""
    if extract == "text":
        answer = " ".join(text.split()).lower()
        return answer or None
    if extract == "last_number":
        found = _NUMBER.findall(text)
        if not found:
            return None
        value = float(found[-1].replace(",", ""))
        return str(int(value)) if value.is_integer() else repr(value)
    if extract == "letter":
        match = re.search(r"[A-Za-z]", text)
        return match.group(0).upper() if match else None
    raise ValueError(f"unknown extract {extract!r} (known: {', '.join(EXTRACTORS)})")


def last_messages(conversation: Conversation) -> dict[str, str]:
    """Each speaker's last message (the user prompt and environment messages are not speakers')."""
    out: dict[str, str] = {}
    for m in conversation:
        if m["actor"] != "user" and m.get("role") != "environment":
            out[m["actor"]] = m["content"]
    return out


def answers(conversation: Conversation, extract: str, exclude: Sequence[str] = ()) -> dict[str, str]:
    """speaker -> answer, for speakers whose last message gives one."""
    out = {}
    for actor, text in last_messages(conversation).items():
        if actor in exclude:
            continue
        answer = extract_answer(text, extract)
        if answer is not None:
            out[actor] = answer
    return out


def majority(votes: Mapping[str, str]) -> str | None:
    """The answer with strictly more votes than any other; a tie (or no vote) decides nothing."""
    counts = Counter(votes.values()).most_common()
    if not counts or (len(counts) > 1 and counts[0][1] == counts[1][1]):
        return None
    return counts[0][0]


def reference_answer(row: Mapping[str, Any], field: str, extract: str) -> str | None:
    return extract_answer(str(row[field]), extract) if field else None


def majority_vote_rewards(conversation: Conversation, row: Mapping[str, Any], field: str, extract: str, mode: str) -> dict[str, float]:
    """Per speaker, after a vote over everyone's last answers:
    - mode "agree" (no labels needed): 1 if the speaker's answer is the majority's, else 0;
    - mode "team" (needs `field`): every speaker gets 1 if the majority answer equals the row's
      answer, else 0 (a tie or no vote is a wrong outcome).
    Speakers with no answer get 0."""
    votes = answers(conversation, extract)
    outcome = majority(votes)
    speakers = last_messages(conversation)
    if mode == "agree":
        return {a: 1.0 if outcome is not None and votes.get(a) == outcome else 0.0 for a in speakers}
    if mode == "team":
        right = outcome is not None and outcome == reference_answer(row, field, extract)
        return {a: 1.0 if right else 0.0 for a in speakers}
    raise ValueError(f"unknown mode {mode!r} (known: {', '.join(VOTE_MODES)})")


def verdict(judge_text: str, debaters: Sequence[str]) -> str | None:
    """The debater the judge names first in its last message (whole-word, case-insensitive); none named -> None."""
    best: tuple[int, str] | None = None
    for name in debaters:
        match = re.search(rf"(?<![A-Za-z0-9_]){re.escape(name)}(?![A-Za-z0-9_])", judge_text, re.IGNORECASE)
        if match and (best is None or match.start() < best[0]):
            best = (match.start(), name)
    return best[1] if best else None


def debate_rewards(conversation: Conversation, row: Mapping[str, Any], judge: str, field: str, extract: str) -> dict[str, float]:
    """Per speaker, after the judge's verdict (its last message names a winning debater):
    - the winner gets 1, every other debater 0 (no verdict: every debater 0);
    - the judge, with `field`: 1 if the winner's last answer equals the row's answer, else 0;
      without `field`: 0 (a judge trained without labels would learn nothing true)."""
    speakers = last_messages(conversation)
    debaters = [a for a in speakers if a != judge]
    winner = verdict(speakers.get(judge, ""), debaters) if judge in speakers else None
    out = {a: 1.0 if a == winner else 0.0 for a in debaters}
    if judge in speakers:
        right = False
        if winner is not None and field:
            right = extract_answer(speakers[winner], extract) == reference_answer(row, field, extract)
        out[judge] = 1.0 if right else 0.0
    return out
