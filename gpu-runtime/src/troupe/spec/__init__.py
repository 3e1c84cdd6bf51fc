"""RunSpec v1: load, fill defaults, validate, and check what this runtime supports."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Collection, Mapping

from .issues import FieldIssue, SpecError, format_path
from .references import reference_issues
from .sandbox_rules import sandbox_issues
from .text_format import parse_spec_text, place_issues
from .schema import events_schema, fill_defaults, runspec_schema, schema_issues

RunSpecDict = dict[str, Any]


def validate_spec(document: Mapping[str, Any]) -> RunSpecDict:
    """The document with zod's defaults filled, or SpecError naming every field at fault."""
    if not isinstance(document, Mapping):
        raise SpecError.at("(root)", "a RunSpec must be a JSON object")
    filled = fill_defaults(dict(document), runspec_schema())
    issues = schema_issues(filled)
    if not issues:
        issues = reference_issues(filled)
    if issues:
        raise SpecError(issues)
    return filled


def check_supported(spec: RunSpecDict, cuda_available: bool | None = None, in_process: Collection[str] = ()) -> None:
    """SpecError naming each field whose value this runtime cannot run (yet), or cannot run safely:
    user code where no sandbox can start. `in_process`: reward names the caller runs itself."""
    from .support import support_issues  # CLI startup: the support rules import torch (envs, algorithms); load_spec stays torch-free

    gpu_count, bf16 = None, True
    if cuda_available is None:
        import torch

        cuda_available = torch.cuda.is_available()
        if cuda_available:
            gpu_count, bf16 = torch.cuda.device_count(), torch.cuda.is_bf16_supported()
    issues = support_issues(spec, cuda_available, gpu_count, bf16) + sandbox_issues(spec, in_process)
    if issues:
        raise SpecError(issues)


def load_spec(source: str | Path | Mapping[str, Any], check_support: bool = False) -> RunSpecDict:
    """Read a RunSpec (a JSON or YAML file path, or an already-parsed dict), fill defaults and validate it.
    Field issues of a file are placed at their line and column in it."""
    if isinstance(source, Mapping):
        document: Any = source
    else:
        path = Path(source)
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as e:
            raise SpecError.at("(root)", f"cannot read {path}: {e.strerror}") from e
        document = parse_spec_text(text, str(path))
        try:
            return _validated(document, check_support)
        except SpecError as e:
            raise SpecError(place_issues(e.issues, text)) from None
    return _validated(document, check_support)


def _validated(document: Any, check_support: bool) -> RunSpecDict:
    spec = validate_spec(document)
    if check_support:
        check_supported(spec)
    return spec


__all__ = [
    "FieldIssue",
    "RunSpecDict",
    "SpecError",
    "check_supported",
    "events_schema",
    "fill_defaults",
    "format_path",
    "load_spec",
    "parse_spec_text",
    "runspec_schema",
    "validate_spec",
]
