"""The README is a newcomer's page: short, opening with the two commands that work on a fresh clone (the demo
render and the tests, the latter the very command .ci/run runs), its musicvid commands ones the command line
takes; and no link in it, CONTRIBUTING.md or docs/ leads nowhere."""

import re
import shlex
from pathlib import Path

import pytest

from musicvid.cli import build_parser

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()
PAGES = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def code_lines(text: str) -> list[str]:
    """The lines of a page's indented code blocks (four spaces after a blank line or another code line)."""
    lines, found, in_code = text.splitlines(), [], False
    for before, line in zip([""] + lines, lines):
        in_code = line.startswith("    ") and (in_code or not before.strip())
        if in_code:
            found.append(line.strip())
    return found


def headings(text: str) -> list[str]:
    """A page's headings as GitHub anchors them (punctuation dropped, spaces as hyphens, repeats numbered);
    lines inside fenced code are no headings."""
    seen: dict[str, int] = {}
    anchors, fenced = [], False
    for line in text.splitlines():
        fenced ^= line.startswith("```")
        if not fenced and re.match(r"#{1,6} ", line):
            slug = re.sub(r"[^\w\- ]", "", line.lstrip("#").strip().lower()).replace(" ", "-")
            anchors.append(f"{slug}-{seen[slug]}" if slug in seen else slug)
            seen[slug] = seen.get(slug, 0) + 1
    return anchors


def test_the_readme_is_short_and_opens_with_the_demo_and_the_tests():
    assert len(README) <= 8000
    before_any_section = README.split("\n## ", 1)[0]
    demo, tests = code_lines(before_any_section)[:2]
    assert demo.startswith("python3 -m venv .venv") and "musicvid render assets/demo/demo.mp3 --models tiny" in demo
    assert tests.startswith("python3 -m venv .venv") and "python -m pytest" in tests
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert tests in ci, ".ci/run must run the README's test command"


def test_every_musicvid_command_in_the_readme_is_one_the_command_line_takes():
    commands = [line.split("&& ")[-1].split("  #")[0] for line in code_lines(README) if "musicvid " in line]
    commands = [c for c in commands if c.startswith("musicvid ")]
    assert len(commands) >= 8
    for command in commands:
        try:
            build_parser().parse_args(shlex.split(command)[1:])
        except SystemExit:
            pytest.fail(f"the README's command does not parse: {command}")


def test_a_command_line_the_parser_refuses_is_caught():
    with pytest.raises(SystemExit):
        build_parser().parse_args(["render", "song.mp3", "--no-such-option"])


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_leads_to_a_file_and_heading_that_exist(page):
    for target in LINK.findall(page.read_text()):
        if re.match(r"[a-z]+:", target):
            continue  # http:, https:, mailto:
        path, _, anchor = target.partition("#")
        linked = (page.parent / path).resolve() if path else page
        assert linked.exists(), f"{page.name} links to {target}, which is not there"
        if anchor and linked.suffix == ".md":
            assert anchor in headings(linked.read_text()), f"{page.name} links to {target}: no such heading"


def test_headings_are_anchored_as_github_anchors_them():
    text = "# A (`--fast`) mode\n```\n# not a heading\n```\n## The song's form\n## The song's form\n"
    assert headings(text) == ["a---fast-mode", "the-songs-form", "the-songs-form-1"]
