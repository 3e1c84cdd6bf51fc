"""Launching a run's ranks: `torch.distributed.run` on this host (ranks.py), or Ray across nodes (ray_ranks.py).

`python -m troupe run` stays the one entry point: for a spec with several ranks it becomes the supervisor
of the ranks it launches, relays rank 0's events to its own event stream, forwards control commands to
rank 0, and turns a rank's failure into the run's error event with that rank's traceback."""
