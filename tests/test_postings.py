"""Postings and siblings: which posting a member came from (by Message-ID stems of both
generators, or by the merge that brought it in), and `--with-siblings`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from backportr.examples.ima import A1175, B836C, ImaFixture
from backportr.git.builder import RepoBuilder
from backportr.text.postings import MessageKey, message_ids, message_key, positions, posting_keys
from tests.conftest import backportr


@pytest.mark.parametrize(
    ("message_id", "key"),
    [  # git send-email: date.pid-k-sender; b4: date-topic-vN-k-hash@host
        (
            "<20230124193025.185781-4-jlayton@kernel.org>",
            MessageKey("20230124193025.185781-jlayton@kernel.org", 4),
        ),
        (
            "20240131-ima-overlay-v3-2-4d3c2b1a0f9e@kernel.org",
            MessageKey("20240131-ima-overlay-v3@kernel.org", 2),
        ),
        ("CAHk-=wh1234@mail.gmail.com", None),  # a hand-written mail: no posting
        ("<some.thing@example.org>", None),
    ],
)
def test_message_keys_of_both_generators(message_id: str, key: MessageKey | None) -> None:
    assert message_key(message_id) == key


def test_message_ids_from_every_trailer_form() -> None:
    message = (
        "subject\n\nbody\n\n"
        "Link: https://lore.kernel.org/r/20230124193025.185781-4-jlayton@kernel.org\n"
        "Link: https://lore.kernel.org/linux-fsdevel/20240131-ima-v2-1-abcdef@kernel.org/\n"
        "Link: https://patch.msgid.link/20240201-x-v1-3-123456@kernel.org\n"
        "Message-Id: <20230101000000.42-2-dev@example.org>\n"
        "Link: https://bugzilla.kernel.org/show_bug.cgi?id=1\n"
    )
    assert message_ids(message) == [
        "20230124193025.185781-4-jlayton@kernel.org",
        "20240131-ima-v2-1-abcdef@kernel.org",
        "20240201-x-v1-3-123456@kernel.org",
        "20230101000000.42-2-dev@example.org",
    ]
    assert [k.number for k in posting_keys(message)] == [4, 1, 3, 2]


def test_positions_allow_for_a_cover_letter() -> None:
    assert positions([2, 3, 4], None) == {2: 1, 3: 2, 4: 3}  # send-email, cover was 1
    assert positions([1, 2], None) == {1: 1, 2: 2}  # no cover letter
    assert positions([1, 3], 0) == {1: 1, 3: 3}  # b4: the cover is 0


def _resolve_json(path: Path, target: str, *extra: str) -> dict:  # type: ignore[type-arg]
    proc = backportr("resolve", target, "--repo", str(path), "--format", "json", *extra)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)  # type: ignore[no-any-return]


def test_ima_a1175_is_3_of_8_and_siblings_join_on_request(ima: ImaFixture) -> None:
    """The acceptance case: the IMA fixture carries Jeff Layton's 8-patch posting with its
    `Link:` trailers; a1175d6b1bda shows as 3/8 with its siblings' state, and
    `--with-siblings earlier` adds 1/8 and 2/8 ("same posting"); the trial still applies."""
    plain = _resolve_json(ima.path, ima.ids[B836C], "-b", "v5.10.194")
    series = plain["branches"][0]["series"]
    a1175 = next(m for m in series if m["commit"] == ima.ids[A1175])
    posting = a1175["posting"]
    assert (posting["position"], posting["total"]) == (3, 8)
    states = {s["position"]: s["state"] for s in posting["siblings"]}
    assert states == {1: "absent", 2: "absent", 3: "this", 4: "absent", 5: "absent",
                      6: "absent", 7: "absent", 8: "absent"}  # fmt: skip
    assert ima.ids["iversion-1of8"] not in [m["commit"] for m in series]
    earlier = _resolve_json(
        ima.path, ima.ids[B836C], "-b", "v5.10.194", "--with-siblings", "earlier"
    )
    branch = earlier["branches"][0]
    commits = [m["commit"] for m in branch["series"]]
    first, second = ima.ids["iversion-1of8"], ima.ids["iversion-2of8"]
    assert commits.index(first) < commits.index(second) < commits.index(ima.ids[A1175])
    for member in branch["series"][:2]:
        assert member["reasons"][0]["kind"] == "posting"
        assert "same posting" in member["reasons"][0]["detail"]
    assert branch["status"] == "ready" and all(m["apply"] == "clean" for m in branch["series"])
    assert ima.ids["iversion-4of8"] not in commits  # later ones only with `all`
    everything = _resolve_json(
        ima.path, ima.ids[B836C], "-b", "v5.10.194", "--with-siblings", "all"
    )
    later = [m["commit"] for m in everything["branches"][0]["series"]]
    assert all(ima.ids[f"iversion-{n}of8"] in later for n in range(1, 9) if n != 3)
    assert later.index(ima.ids["iversion-4of8"]) > later.index(ima.ids[A1175])
    roles = {m["commit"]: m["role"] for m in everything["branches"][0]["series"]}
    assert roles[ima.ids["iversion-4of8"]] == "sibling"  # it fixes nothing: not a follow-up
    assert roles[ima.ids["iversion-1of8"]] == "prerequisite"
    text = backportr(
        "resolve", ima.ids[B836C], "--repo", str(ima.path), "-b", "v5.10.194",
        "--with-siblings", "all",
    ).stdout  # fmt: skip
    assert "more (-f json lists every reason)" in text  # not seven `why:` lines a patch
    assert max(_whys(text)) <= 4


def test_a_merge_request_is_a_posting(tmp_path: Path) -> None:
    """Projects that merge each series (merge and pull requests): the merge that brought a
    commit in is its posting, its subject the cover; siblings in order, with their state."""
    b = RepoBuilder(tmp_path / "repo")
    b.commit("init\n", {"src/a.c": "int a;\n", "src/b.c": "int b;\n"}, name="init")
    b.branch("nm-1-48", "master")
    b.branch("topic", "master")
    for n, path in ((1, "src/a.c"), (2, "src/b.c"), (3, "src/c.c")):
        b.commit(f"core: step {n}\n", {path: f"int step{n};\n"}, branch="topic", name=f"step{n}")
    b.commit("unrelated on main\n", {"src/d.c": "int d;\n"}, name="unrelated")
    b.merge("master", "topic", "Merge branch 'th/steps' into main", name="merge")
    b.cherry_pick("step1", "nm-1-48", name="step1-bp")
    data = _resolve_json(b.path, b.ids["step3"], "-b", "nm-1-48")
    posting = data["branches"][0]["series"][-1]["posting"]
    assert posting["cover"] == "Merge branch 'th/steps' into main"
    assert posting["key"] == f"merge {b.ids['merge'][:12]}"
    assert [(s["position"], s["commit"], s["state"]) for s in posting["siblings"]] == [
        (1, b.ids["step1"], "present"),
        (2, b.ids["step2"], "absent"),
        (3, b.ids["step3"], "this"),
    ]
    with_earlier = _resolve_json(
        b.path, b.ids["step3"], "-b", "nm-1-48", "--with-siblings", "earlier"
    )
    assert [m["commit"] for m in with_earlier["branches"][0]["series"]] == [
        b.ids["step2"], b.ids["step3"]
    ]  # fmt: skip
    lone = _resolve_json(b.path, b.ids["unrelated"], "-b", "nm-1-48")
    assert lone["branches"][0]["series"][0]["posting"] is None  # on the first-parent line


def test_the_graph_draws_a_cluster_per_posting(ima: ImaFixture) -> None:
    proc = backportr(
        "resolve", ima.ids[B836C], "--repo", str(ima.path), "-b", "v5.10.194",
        "--with-siblings", "earlier", "--format", "dot",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    cluster = proc.stdout.split("subgraph cluster_0_posting_0 {", 1)[1].split("}", 1)[0]
    assert "posting: https://lore.kernel.org/r/20230124193025.185781-" in cluster  # a real link
    for name in ("iversion-1of8", "iversion-2of8", A1175):
        assert ima.ids[name][:12] in cluster


_COVER = """From: Jeff Layton <jlayton@kernel.org>
To: linux-fsdevel@vger.kernel.org
Subject: [PATCH v8 RESEND 0/8] fs: clean up internal i_version handling
Date: Tue, 24 Jan 2023 14:30:17 -0500
Message-ID: <20230124193025.185781-1-jlayton@kernel.org>

The series, for the fixture.
"""

_PATCH_3 = """From: Jeff Layton <jlayton@kernel.org>
To: linux-fsdevel@vger.kernel.org
Subject: [PATCH v8 RESEND 3/8] vfs: plumb i_version handling into struct kstat
Date: Tue, 24 Jan 2023 14:30:20 -0500
Message-ID: <20230124193025.185781-4-jlayton@kernel.org>
In-Reply-To: <20230124193025.185781-1-jlayton@kernel.org>
References: <20230124193025.185781-1-jlayton@kernel.org>

Reviewed-by: NeilBrown <neilb@suse.de>
Signed-off-by: Jeff Layton <jlayton@kernel.org>
---
 fs/stat.c | 1 +
 1 file changed, 1 insertion(+)

diff --git a/fs/stat.c b/fs/stat.c
--- a/fs/stat.c
+++ b/fs/stat.c
@@ -1,1 +1,2 @@
 #include <linux/fs.h>
+#include <linux/iversion.h>
"""


def test_the_cover_letter_from_lore(ima: ImaFixture, tmp_path: Path) -> None:
    """resolve --lore: the posting's cover subject and how many patches were posted, read from
    the thread of the member's own mail on a real public-inbox-httpd; kept in the index."""
    import shutil

    from tests.inbox import start_archive

    if shutil.which("public-inbox-httpd") is None:
        pytest.skip("public-inbox is not installed")
    archive = start_archive(tmp_path / "pi", {"cover": _COVER, "patch": _PATCH_3})
    index = tmp_path / "index.sqlite"
    where = ["-b", "v5.10.194", "--index", str(index)]
    try:
        online = _resolve_json(ima.path, ima.ids[B836C], *where, "--lore", archive.url)
    finally:
        archive.stop()
    posting = next(
        m["posting"] for m in online["branches"][0]["series"] if m["commit"] == ima.ids[A1175]
    )
    assert posting["cover"] == "fs: clean up internal i_version handling"
    assert (posting["posted"], posting["position"], posting["total"]) == (8, 3, 8)
    assert posting["message_id"] == "20230124193025.185781-4-jlayton@kernel.org"
    again = _resolve_json(ima.path, ima.ids[B836C], *where, "--lore", archive.url)  # it is down
    kept = next(m["posting"] for m in again["branches"][0]["series"] if m["posting"])
    assert kept["cover"] == "fs: clean up internal i_version handling"  # from the index
    text = backportr(
        "resolve", ima.ids[B836C], "--repo", str(ima.path), *where, "--lore", archive.url
    ).stdout
    assert '3/8 of "fs: clean up internal i_version handling"' in text


def test_an_unreachable_archive_leaves_the_history_answer(ima: ImaFixture, tmp_path: Path) -> None:
    where = ["-b", "v5.10.194", "--index", str(tmp_path / "index.sqlite")]
    proc = backportr(
        "resolve", ima.ids[B836C], "--repo", str(ima.path), *where, "--format", "json",
        "--lore", "http://127.0.0.1:9/all/",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "warning: cannot read the posting" in proc.stderr
    posting = next(m["posting"] for m in json.loads(proc.stdout)["branches"][0]["series"]
                   if m["posting"])  # fmt: skip
    assert posting["cover"] is None and posting["total"] == 8


def test_posted_patches_are_mapped_by_subject(tmp_path: Path) -> None:
    """From the thread: a posted patch applied without a `Link:` is found by its subject, one
    that never landed is `not-upstream`."""
    import shutil

    from tests.inbox import start_archive
    from tests.resolve_scenarios import BRANCH, Kernel

    if shutil.which("public-inbox-httpd") is None:
        pytest.skip("public-inbox is not installed")
    k = Kernel(tmp_path / "repo")
    stem = "20240101120000.4242-{}-dev@example.org"
    k.edit_fn(
        "p1", "drv_fn1", "y += 11;", trailers=f"Link: https://lore.kernel.org/r/{stem.format(2)}\n"
    )
    k.edit_fn("p2", "drv_fn2", "y += 22;")  # applied without a Link:
    mails = {}
    for number, subject in (
        (0, "drv: three steps"),
        (1, "drv: p1"),
        (2, "drv: p2"),
        (3, "drv: p3"),
    ):
        mails[str(number)] = (
            f"From: Dev <dev@example.org>\nTo: list@example.org\n"
            f"Subject: [PATCH {number}/3] {subject}\nDate: Mon, 1 Jan 2024 12:00:0{number} +0000\n"
            f"Message-ID: <{stem.format(number + 1)}>\n"
            + (f"In-Reply-To: <{stem.format(1)}>\n" if number else "")
            + "\nbody\n"
        )
    archive = start_archive(tmp_path / "pi", mails)
    try:
        data = _resolve_json(k.b.path, k.b.ids["p1"], "-b", BRANCH, "--lore", archive.url)
    finally:
        archive.stop()
    posting = data["branches"][0]["series"][0]["posting"]
    assert posting["cover"] == "drv: three steps" and posting["posted"] == 3
    assert [(s["position"], s["commit"], s["state"]) for s in posting["siblings"]] == [
        (1, k.b.ids["p1"], "this"),
        (2, k.b.ids["p2"], "absent"),
        (3, None, "not-upstream"),
    ]


def _whys(text: str) -> list[int]:
    """How many `why:` lines each member of a text answer has."""
    counts = [0]
    for line in text.splitlines():
        if line.strip().startswith("why:"):
            counts[-1] += 1
        elif line[:6].strip().rstrip(".").isdigit():
            counts.append(0)
    return counts
