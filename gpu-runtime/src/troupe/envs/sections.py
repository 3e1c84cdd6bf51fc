"""The typed RunSpec sections an environment is built from (issue #26: each part receives only its own section).

The run hands every builder its `Environment` (and `Dataset`) section of the typed RunSpec; a JSON document (what
tests, notebooks and the producer processes hold) is read into the typed section once, here, at the builder's door,
so nothing past the door digs fields out of a dict by string key.
"""

from __future__ import annotations

from typing import Any, Mapping

from ..spec.runspec_types import Dataset as DatasetSection, Environment as EnvironmentSection

EnvironmentInput = EnvironmentSection | Mapping[str, Any]
DatasetInput = DatasetSection | Mapping[str, Any]


def environment_section(env: EnvironmentInput) -> EnvironmentSection:
    """The environment's typed section (a document is read with the schema's defaults filled)."""
    return env if isinstance(env, EnvironmentSection) else EnvironmentSection.from_dict(env)


def dataset_section(dataset: DatasetInput) -> DatasetSection:
    """The dataset's typed section (a document is read with the schema's defaults filled)."""
    return dataset if isinstance(dataset, DatasetSection) else DatasetSection.from_dict(dataset)
