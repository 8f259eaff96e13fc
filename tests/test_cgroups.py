"""The session cgroup's pieces: where one can go (pure, from /proc's text), and, where this machine
lets us, one made, killed whole with a forking member inside, and removed; the container chosen."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import uuid

import pytest

from agent_cli.tools import cgroups
from tests.reliability.procs import wait_for

HYBRID = """\
31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
37 31 0:34 / /sys/fs/cgroup/freezer rw,relatime - cgroup cgroup rw,freezer
39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids
40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
"""
HYBRID_OWN = "9:name=systemd:/\n8:pids:/a\n6:freezer:/b c\n0::/\n"
UNIFIED = "30 23 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n"
USER_OWN = "0::/user.slice/user-1000.slice/user@1000.service/app.slice/term.scope\n"
# A container that sees the hierarchy from /docker/abc down (no cgroup namespace).
BOUND = "50 40 0:30 /docker/abc /sys/fs/cgroup/pids rw - cgroup cgroup rw,pids\n"


@pytest.mark.parametrize(
    ("mountinfo", "own", "expected"),
    [
        (
            HYBRID,
            HYBRID_OWN,
            [
                ("cgroup2", "/sys/fs/cgroup/unified"),
                ("freezer", "/sys/fs/cgroup/freezer/b c"),
                ("pids", "/sys/fs/cgroup/pids/a"),
            ],
        ),
        (UNIFIED, USER_OWN, [("cgroup2", "/sys/fs/cgroup" + USER_OWN[3:].strip())]),
        (BOUND, "3:pids:/docker/abc/inner\n", [("pids", "/sys/fs/cgroup/pids/inner")]),
        (BOUND, "3:pids:/elsewhere\n", []),  # our cgroup is not below what is mounted
        (UNIFIED.replace("cgroup2 cgroup2", "tmpfs tmpfs"), USER_OWN, []),
        ("", "", []),
        ("garbage\n - \n", "x:y\n", []),
    ],
    ids=["hybrid", "unified-user", "bound-subtree", "not-below", "no-cgroup-fs", "empty", "garbage"],
)
def test_places_are_the_agents_own_cgroup_in_each_mounted_hierarchy(
    mountinfo: str, own: str, expected: list[tuple[str, str]]
) -> None:
    assert cgroups.places(mountinfo, own) == expected


def test_a_mount_point_with_a_space_is_unescaped() -> None:
    mountinfo = "41 31 0:38 / /mnt/my\\040cgroups rw - cgroup2 cgroup2 rw\n"
    assert cgroups.places(mountinfo, "0::/x\n") == [("cgroup2", "/mnt/my cgroups/x")]


def _offered() -> list[tuple[str, str]]:
    try:
        with open("/proc/self/mountinfo") as f, open("/proc/self/cgroup") as g:
            return cgroups.places(f.read(), g.read())
    except OSError:
        return []


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="cgroups are Linux's")
@pytest.mark.parametrize("kind", list(cgroups.KINDS))
def test_a_cgroup_is_killed_whole_with_a_forking_member_and_removed(kind: str) -> None:
    where = dict(_offered()).get(kind)
    if where is None:
        pytest.skip(f"no {kind} hierarchy here")
    made = cgroups.make(kind, where, f"{cgroups.PREFIX}test-{uuid.uuid4().hex}")
    if made is None:
        pytest.skip(f"the {kind} hierarchy is not ours to write")
    # A member that forks without end (each child in a new session) until it is killed.
    script = "while :; do setsid sleep 1000 & sleep 0.05; done"
    join = f'echo 0 > {made.procs_file} && exec sh -c "{script}"'
    proc = subprocess.Popen(["sh", "-c", join], start_new_session=True)
    try:
        assert wait_for(lambda: len(cgroups.members(made.path)) >= 4, 30.0), "the member never forked"
        cgroups.kill(made)
        assert wait_for(lambda: not cgroups.members(made.path), 30.0), cgroups.members(made.path)
        assert cgroups.remove(made, 10.0)
        assert not os.path.exists(made.path)
    finally:
        for pid in cgroups.members(made.path) if os.path.exists(made.path) else []:
            os.kill(pid, signal.SIGKILL)
        proc.kill()
        proc.wait(30)
        cgroups.remove(made, 5.0)


def test_a_cgroup_whose_owner_runs_or_lives_in_another_namespace_is_not_stale() -> None:
    me = cgroups.owner_name(os.getpid())[len(cgroups.PREFIX) :]
    namespace, pid, start = me.split("-")
    assert not cgroups._stale(cgroups.PREFIX + me, namespace)
    assert cgroups._stale(f"{cgroups.PREFIX}{namespace}-{pid}-{int(start) + 1}", namespace)  # pid reused
    assert not cgroups._stale(f"{cgroups.PREFIX}1-{pid}-{int(start) + 1}", namespace)  # not our namespace
    assert not cgroups._stale(f"{cgroups.PREFIX}test-x", namespace)
