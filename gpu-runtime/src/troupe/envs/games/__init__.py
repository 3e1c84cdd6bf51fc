"""Two-player board games through PettingZoo (`environments[].kind: "game"`): the board wrapper
(board.py), the built-in random opponent (players.py) and the environment (environment.py)."""
