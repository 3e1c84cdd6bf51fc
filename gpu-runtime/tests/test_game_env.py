"""The `game` environment: PettingZoo board games as text, the random player, illegal moves, rewards."""

import pytest

from troupe.envs.collaborative import Episode, Message
from troupe.envs.games.board import BoardGame, parse_move
from troupe.envs.games.environment import GameEnvironment, game_issues
from troupe.spec import SpecError


def test_tic_tac_toe_cells_are_numbered_row_by_row():
    game = BoardGame.new("tic_tac_toe")
    game.play(1)  # X top left
    game.play(2)  # O top middle
    game.play(6)  # X middle right
    assert game.render() == "XO./..X/..."
    assert game.legal_moves() == [3, 4, 5, 7, 8, 9]
    with pytest.raises(ValueError):
        game.play(2)


def test_tic_tac_toe_win_and_draw_results():
    game = BoardGame.new("tic_tac_toe")
    for move in (1, 4, 2, 5, 3):
        game.play(move)
    assert game.over and game.result == [1.0, -1.0] and game.outcome_text() == "X wins"
    draw = BoardGame.new("tic_tac_toe")
    for move in (1, 2, 3, 5, 4, 6, 8, 7, 9):
        draw.play(move)
    assert draw.result == [0.0, 0.0] and draw.outcome_text() == "draw"


def test_connect_four_columns_drop_to_the_bottom():
    game = BoardGame.new("connect_four")
    for move in (4, 4, 3):
        game.play(move)
    rows = game.render().split("/")
    assert len(rows) == 6 and rows[-1] == "..XX..." and rows[-2] == "...O..."
    for move in (1, 2, 1, 5):  # X: 4,3,2,5 along the bottom row
        game.play(move)
    assert game.result == [1.0, -1.0]


def test_parse_move_reads_the_first_whole_number():
    assert parse_move(" 7\n") == 7
    assert parse_move("cell 12 then 3") == 12
    assert parse_move("x") is None


def episode(sample=0):
    return Episode(0, 0, sample, [], "", {}, {})


def env(spec_game, actors=("me",)):
    e = GameEnvironment.from_spec({"name": "ttt", "actors": list(actors), "game": spec_game}, 0)
    e.actors = list(actors)
    return e


def test_against_the_random_player_the_game_speaks_between_moves():
    g = env({"name": "tic_tac_toe", "opponent": "random"})
    ep = episode()
    opening = g.reset(ep)
    assert opening == "tic_tac_toe (1-9, row by row): me is X. .../.../..."
    assert g.next_speaker(ep, 0) == "me"
    reply = g.step(ep, Message("me", "5", [], []))
    game = ep.state["game"]
    assert len(game.moves) == 2 and game.moves[0] == 5 and reply.startswith(f"O plays {game.moves[1]}. ")
    assert reply.endswith(game.render())
    # Play every legal move in order until the game ends; the score follows the result.
    while not ep.done:
        g.step(ep, Message("me", str(game.legal_moves()[0]), [], []))
    assert g.next_speaker(ep, 9) is None
    assert g.score(ep) == {"me": {"game": game.result[0]}}


def test_illegal_or_unreadable_moves_forfeit():
    g = env({"name": "tic_tac_toe"})
    ep = episode()
    g.reset(ep)
    reply = g.step(ep, Message("me", "hello", [], []))
    assert ep.done and reply.startswith("no move: X forfeits.")
    assert g.score(ep) == {"me": {"game": -1.0}}
    ep2 = episode()
    g.reset(ep2)
    g.step(ep2, Message("me", "5", [], []))
    taken = ep2.state["game"].moves[1]
    reply = g.step(ep2, Message("me", str(taken), [], []))
    assert reply.startswith(f"illegal move {taken}: X forfeits") and g.score(ep2) == {"me": {"game": -1.0}}


def test_alternate_sides_and_two_actors():
    g = env({"name": "tic_tac_toe", "actorPlays": "alternate"})
    first, second = episode(0), episode(1)
    assert "me is X" in g.reset(first) and len(first.state["game"].moves) == 0
    opening = g.reset(second)
    assert "me is O" in opening and "X plays" in opening and len(second.state["game"].moves) == 1
    duel = env({"name": "connect_four", "opponent": "actors"}, actors=("a", "b"))
    ep = episode()
    assert duel.reset(ep) == "connect_four (1-7, columns): a is X, b is O. " + "/".join(["......."] * 6)
    assert duel.next_speaker(ep, 0) == "a"
    duel.step(ep, Message("a", "4", [], []))
    assert duel.next_speaker(ep, 1) == "b"
    assert duel.score(ep) == {"a": {"game": 0.0}, "b": {"game": 0.0}}  # not over: no result yet


def test_random_player_repeats_from_the_environment_name():
    moves = []
    for _ in range(2):
        g = env({"name": "tic_tac_toe", "actorPlays": "second"})
        ep = episode()
        g.reset(ep)
        moves.append(ep.state["game"].moves)
    assert moves[0] == moves[1]


def test_bad_settings_are_refused_with_the_field():
    spec = {"name": "g", "actors": ["a", "b"], "game": {"name": "go"}}  # chess is known since #29
    issues = dict(game_issues(spec, 2))
    assert "unknown game" in issues["environments.2.game.name"]
    assert issues["environments.2.actors"] == "a game against the random player has exactly one actor"
    with pytest.raises(SpecError):
        GameEnvironment.from_spec(spec, 2)
    assert "only for opponent" in dict(game_issues({"name": "g", "actors": ["a", "b"], "game": {"opponent": "actors", "actorPlays": "second"}}, 0))["environments.0.game.actorPlays"]


def test_win_draw_loss_and_forfeit_rates_per_actor():
    """Agents x turns (issue 31): each player's share of games won, drawn, lost (forfeits included), forfeited
    and left unfinished, named per actor so the run reports each under its own actor."""
    from types import SimpleNamespace

    from troupe.envs.acting import environment_metrics

    duel = env({"name": "tic_tac_toe", "opponent": "actors"}, actors=("a", "b"))
    games = []
    # a wins: X takes the top row (1, 2, 3) while O plays 4, 5.
    won = episode()
    duel.reset(won)
    for who, move in [("a", 1), ("b", 4), ("a", 2), ("b", 5), ("a", 3)]:
        duel.step(won, Message(who, str(move), [], []))
    games.append(won)
    # b forfeits with an unreadable move.
    forfeited = episode(1)
    duel.reset(forfeited)
    duel.step(forfeited, Message("a", "5", [], []))
    duel.step(forfeited, Message("b", "pass", [], []))
    games.append(forfeited)
    # Cut off after one move: unfinished.
    cut = episode(2)
    duel.reset(cut)
    duel.step(cut, Message("a", "5", [], []))
    games.append(cut)
    m = duel.metrics(games)
    assert m["game/a/win"] == pytest.approx(2 / 3) and m["game/a/loss"] == 0 and m["game/a/unfinished"] == pytest.approx(1 / 3)
    assert m["game/b/loss"] == pytest.approx(2 / 3) and m["game/b/forfeit"] == pytest.approx(1 / 3) and m["game/b/win"] == 0
    # Reported per actor under plain names (acting.py), each actor its own.
    from troupe.envs.acting import ActingEnvironment

    acting = ActingEnvironment(0, {"name": "duel"}, None, ["a", "b"], [], None, None, impl=duel)  # type: ignore[arg-type]
    conv = SimpleNamespace(env=acting, episodes=games)
    assert environment_metrics([conv], "b")["game/forfeit"] == pytest.approx(1 / 3)
    assert environment_metrics([conv], "a")["game/win"] == pytest.approx(2 / 3)


def seated(spec_game, role):
    """A game against the random player whose one seat is a role (`roles: {<role>: policy}`)."""
    e = GameEnvironment.from_spec({"name": "ttt", "actors": ["policy"], "roles": {role: "policy"}, "game": spec_game}, 0)
    e.actors = [role]  # acting_build: the object sees the players by their role names
    return e


def read(opening, said):
    """What a player's token view reads (collaborative.add_to_views): the opening, then `speaker:text` lines."""
    parts = opening if isinstance(opening, list) else [opening]
    said = [(r.speaker or "game", r.text) for r in parts[1:]] + said
    return "\n".join([parts[0]] + [f"{who}:{text}" for who, text in said]) + "\n"


def replies(reply):
    return [(r.speaker or "game", r.text) for r in reply] if isinstance(reply, list) else [("game", reply)]


def test_with_roles_the_random_player_sits_in_a_seat_and_the_context_is_self_plays():
    """Self-play trains `roles: {X: policy, O: policy}`; the same policy against the random player, its seat a
    role, reads the very context it trained on: both seats named, the random player's moves as its seat's turns."""
    # As X: the policy plays 5, the random player answers.
    vs_random = seated({"opponent": "random", "actorPlays": "first"}, "X")
    ep = episode()
    opening = vs_random.reset(ep)
    assert opening == "tic_tac_toe (1-9, row by row): X is X, O is O. .../.../..."
    answer = vs_random.step(ep, Message("X", "5", [], []))
    o_move = ep.state["game"].moves[1]
    assert [who for who, _ in replies(answer)] == ["game", "O", "game"]
    self_play = env({"name": "tic_tac_toe", "opponent": "actors"}, actors=("X", "O"))
    sp = episode()
    sp_opening = self_play.reset(sp)
    sp_said = [("X", "5")] + replies(self_play.step(sp, Message("X", "5", [], []))) + [("O", str(o_move))]
    sp_said += replies(self_play.step(sp, Message("O", str(o_move), [], [])))
    assert read(opening, [("X", "5")] + replies(answer)) == read(sp_opening, sp_said)
    assert vs_random.next_speaker(ep, 1) == "X"
    # As O: the random player opens as X; the policy's view reads as O's does in self-play.
    as_o = seated({"opponent": "random", "actorPlays": "second"}, "O")
    ep_o = episode()
    opening_o = as_o.reset(ep_o)
    x_move = ep_o.state["game"].moves[0]
    sp_o = episode()
    sp_opening_o = self_play.reset(sp_o)
    sp_said_o = [("X", str(x_move))] + replies(self_play.step(sp_o, Message("X", str(x_move), [], [])))
    assert read(opening_o, []) == read(sp_opening_o, sp_said_o)
    assert as_o.next_speaker(ep_o, 0) == "O"
    # Scores and metrics stay the role's; the random player scores nothing.
    while not ep.done:
        vs_random.step(ep, Message("X", str(ep.state["game"].legal_moves()[0]), [], []))
    assert set(vs_random.score(ep)) == {"X"} and set(vs_random.metrics([ep])) == {f"game/X/{w}" for w in ("win", "draw", "loss", "forfeit", "unfinished")}


def test_a_role_named_after_a_mark_plays_that_mark():
    spec = {"name": "g", "actors": ["policy"], "roles": {"O": "policy"}, "game": {"opponent": "random", "actorPlays": "first"}}
    assert 'needs actorPlays "second"' in dict(game_issues(spec, 0))["environments.0.roles"]
    assert not game_issues({**spec, "game": {"opponent": "random", "actorPlays": "second"}}, 0)
    assert not game_issues({**spec, "roles": {"me": "policy"}, "game": {"opponent": "random", "actorPlays": "alternate"}}, 0)


def test_show_legal_moves_lists_them_under_every_board_the_player_reads():
    g = env({"name": "tic_tac_toe", "opponent": "random", "showLegalMoves": True})
    ep = episode()
    assert g.reset(ep).endswith(".../.../...\nlegal: 1 2 3 4 5 6 7 8 9")
    reply = g.step(ep, Message("me", "5", [], []))
    game = ep.state["game"]
    assert reply.endswith(game.render() + "\nlegal: " + " ".join(map(str, game.legal_moves())))
    assert "5" not in reply.split("legal: ")[1] and str(game.moves[1]) not in reply.split("legal: ")[1]
    while not ep.done:
        reply = g.step(ep, Message("me", str(game.legal_moves()[0]), [], []))
    assert "legal" not in reply  # a finished game lists nothing
