"""What a step reports beyond its metrics: the `episode` events of its transcripts (`transcripts.py`) and
per-turn metrics of each actor's messages (`turn_metrics.py`). The event writer itself is `troupe.events`."""
