"""README.md as a front page: its table is the report tool's output from the committed
results (a hand-edit fails here), so are the run times it quotes, its two commands come
first, and every link of it and of docs/ leads somewhere."""

import json
import re
import shlex

from rmsnorm_bench import ROOT, report

README = ROOT / "README.md"
MADE_BY = re.compile(r"Made by `python -m rmsnorm_bench\.report ([^`]+)`")
LINK = re.compile(r"\]\(([^)\s]+)\)")


def test_the_table_is_what_the_report_prints_from_the_committed_results(capsys):
    text = README.read_text()
    commands = MADE_BY.findall(" ".join(text.split()))  # a command may wrap over lines
    assert len(commands) == 1, "README names the command that made its table, once"
    args = shlex.split(commands[0])
    assert "--headline" in args and "--commit" in args and "--machine" in args
    report.main(args)
    printed = capsys.readouterr().out.strip()
    assert printed.count("\n| ") >= 4, printed  # a table of several rows
    assert printed in text


def test_the_two_commands_are_in_the_first_40_lines_and_the_page_is_short():
    lines = README.read_text().splitlines()
    first = "\n".join(lines[:40])
    assert "bash scripts/run" in first and "bash scripts/test" in first
    assert len(lines) <= 150


def slug(heading: str) -> str:
    """The anchor GitHub gives a Markdown heading."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def test_every_relative_link_of_readme_and_docs_exists():
    pages = [README, *sorted((ROOT / "docs").glob("*.md"))]
    broken = []
    for page in pages:
        for target in LINK.findall(page.read_text()):
            if re.match(r"[a-z]+:", target):  # https:, mailto:
                continue
            path, _, anchor = target.partition("#")
            file = (page.parent / path).resolve() if path else page
            if not file.exists():
                broken.append(f"{page.name}: {target}")
            elif anchor and file.suffix == ".md":
                headings = re.findall(r"^#+ (.+)$", file.read_text(), re.M)
                if anchor not in {slug(h) for h in headings}:
                    broken.append(f"{page.name}: {target} (no such heading)")
    assert not broken, broken


RUN_TIME = re.compile(r"(\d+) s\s+at (\w{7,})")


def test_the_run_times_it_quotes_are_those_of_the_committed_run_records():
    text = " ".join(README.read_text().split())
    quoted = RUN_TIME.findall(text)
    assert len(quoted) >= 2, "README quotes the H200 run's time before and after"
    for seconds, commit in quoted:
        # the commit's run under the default name (a later run of it: -2, -quack, ...)
        runs = (ROOT / "docs" / "runs").glob(f"nvidia-h200-{commit[:8]}*.json")
        records = [r for r in runs if re.fullmatch(r"nvidia-h200-[0-9a-f]{8}\.json", r.name)]
        assert records, f"no run record of {commit} in docs/runs/"
        total = json.loads(records[0].read_text())["seconds"]["total"]
        assert int(seconds) == round(total), (commit, seconds, total)
