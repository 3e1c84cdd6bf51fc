import os
import sys
import tempfile
from pathlib import Path

import pytest

# Nothing may be downloaded in tests (no weights exist offline anyway).
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
sys.path.insert(0, str(Path(__file__).parent))  # for runtime_helpers
# The operator's policy of the test host (issue 30; host/host_policy.py, host/data_roots.py): API actors may call the
# loopback fakes the tests start, with the one key variable they set, and files may be read under the temp
# folder (pytest's tmp_path) and these tests' own fixtures. test_host_policy.py narrows them to check refusals.
os.environ.setdefault("TROUPE_API_HOSTS", "127.0.0.1,localhost")
os.environ.setdefault("TROUPE_ACTOR_KEY_ENVS", "TROUPE_TEST_BOB_KEY")
os.environ.setdefault("TROUPE_DATA_ROOTS", f"{tempfile.gettempdir()},{Path(__file__).parent}")


@pytest.fixture
def events_validator():
    from jsonschema import Draft202012Validator

    from troupe.spec import events_schema

    return Draft202012Validator(events_schema())
