"""The README's refusal table lists every refusal the code can give (tests/refusal_table.py reads them)."""

from pathlib import Path

from refusal_table import BEGIN, END, refusals, table

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_lists_every_refusal_as_the_code_gives_it():
    text = README.read_text(encoding="utf-8")
    assert BEGIN in text and END in text, "README.md has no refusal table"
    current = text[text.index(BEGIN) : text.index(END) + len(END)] + "\n"
    assert current == table(), (
        "README.md's refusal table is stale: regenerate it with\n"
        "  .venv/bin/python gpu-runtime/tests/refusal_table.py --write"
    )


def test_the_reader_finds_the_refusals_of_every_rule_module():
    where = {r.where.split(":")[0] for r in refusals()}
    for module in ("support.py", "run_rules.py", "sandbox_rules.py", "references.py", "actorRules.ts"):
        assert any(w.endswith(module) for w in where), module
    assert len(refusals()) > 60
