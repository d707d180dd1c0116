"""`crawl --update ARCHIVE --render MODE`: the mode given holds for the new commit; a run that continues the same
commit (`--append`, `--resume`, `--retry-failed`, `--inventory`) keeps the commit's mode, and a different one
given is one line and exit 1, the archive untouched.

An update took every option from the archive's stored crawl, `--render` among them, and said nothing: a
site first read with `--render never` was read again by `--update --full --render always`.
"""

from __future__ import annotations

from nitpicker_core.archive import open_archive


def _unrendered(archive, commit: int) -> dict[str, str | None]:
    with open_archive(archive) as reader:
        return {p["url"]: p["extra"].get("unrendered") for p in reader.pages(commit, scraped=True)}


def test_update_takes_the_render_mode_given(gsite, recrawl) -> None:
    archive = recrawl(gsite.root, "--render", "never")
    first = _unrendered(archive, 1)
    assert len(first) == 31 and all(why and why.startswith("--render never") for why in first.values())

    recrawl(gsite.root, "--full", "--render", "always")
    second = _unrendered(archive, 2)
    assert set(second) == set(first) and set(second.values()) == {None}  # every page rendered
    with open_archive(archive) as reader:
        options = {c["id"]: (c.get("options") or {}).get("render") for c in reader.commits()}
    assert options == {1: "never", 2: "always"}

    recrawl(gsite.root, "--full")  # not given: the archive's latest mode
    assert set(_unrendered(archive, 3).values()) == {None}


def test_continuing_a_commit_in_another_mode_is_refused(gsite, recrawl, cli, tmp_path) -> None:
    archive = recrawl(gsite.root, "--render", "never")
    before = archive.read_bytes()
    done = cli("crawl", "--append", str(archive), gsite.url("p1"), "--render", "always", cwd=tmp_path)
    assert done.returncode == 1 and done.stderr.strip().splitlines() == [
        "nitpicker: error: gen.nitpicker's crawl was made with --render never; --append goes on with it in that mode "
        "(leave --render out, or crawl --update ARCHIVE --render always for a new commit)"
    ], done.stderr
    assert archive.read_bytes() == before
    assert (
        cli("crawl", "--append", str(archive), gsite.url("p1"), "--render", "never", cwd=tmp_path).returncode
        == 0
    )
