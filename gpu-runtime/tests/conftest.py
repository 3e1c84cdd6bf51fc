import os
import sys
from pathlib import Path

import pytest

# Nothing may be downloaded in tests (no weights exist offline anyway).
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
sys.path.insert(0, str(Path(__file__).parent))  # for runtime_helpers


@pytest.fixture
def events_validator():
    from jsonschema import Draft202012Validator

    from troupe.spec import events_schema

    return Draft202012Validator(events_schema())
