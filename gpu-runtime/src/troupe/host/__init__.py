"""This host, as opposed to the spec: what the runtime finds or is allowed on the machine it runs on.

Its GPUs and how the runner numbers them (`gpu_ids.py`), the device a run's ranks use (`device_choice.py`),
process setup: seeds, CPU threads, memory readings (`system.py`), what the operator lets a run reach from here:
API hosts and key variables (`host_policy.py`), folders datasets and models are read from (`data_roots.py`), and
what this host can run, for `python -m troupe capabilities` (`capabilities.py`).

Nothing is imported here: `spec/` and the CLI import the torch-free modules (`gpu_ids`, `host_policy`, `data_roots`)
without loading torch through `system` or `device_choice`.
"""
