"""A run's ranks: launching them with `torch.distributed.run` on this host (ranks.py) or Ray across nodes
(ray_ranks.py), what both supervisors share (relay.py), one rank's entry point (rank_main.py), and what each
rank knows of the others (distributed.py: `RankContext` and the few collectives the loop needs).

`python -m troupe run` stays the one entry point: for a spec with several ranks it becomes the supervisor
of the ranks it launches, relays rank 0's events to its own event stream, forwards control commands to
rank 0, and turns a rank's failure into the run's error event with that rank's traceback."""
