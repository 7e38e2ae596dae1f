"""In-process run journals: numbering, catching up, following live, the bound, retention."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from gth_jupyter.runs.journal import JournalTrimmedError, LocalJournals, RunInfo, RunJournal


def data(n: int) -> bytes:
    return b'data: {"n": %d}\n\n' % n


def framed(n: int) -> bytes:
    return b"id: %d\n" % n + data(n)


async def collect(batches: AsyncIterator[list[bytes]]) -> list[bytes]:
    return [frame async for batch in batches for frame in batch]


def test_append_numbers_frames_from_one_and_returns_them_with_their_id() -> None:
    journal = RunJournal("r", "t", "alice")
    assert journal.last_id == 0
    assert journal.append(data(1)) == framed(1)
    assert journal.append(data(2)) == framed(2)
    assert journal.last_id == 2
    assert journal.info() == RunInfo("r", "t", "alice", ended=False)


def test_after_gives_the_frames_after_an_id() -> None:
    journal = RunJournal("r", "t", "alice")
    for n in range(1, 6):
        journal.append(data(n))
    assert journal.after(0) == [framed(n) for n in range(1, 6)]
    assert journal.after(3) == [framed(4), framed(5)]
    assert journal.after(5) == []
    assert journal.after(9) == []


def test_the_oldest_frames_go_past_the_bound_and_asking_for_them_says_so() -> None:
    size = len(framed(1))
    journal = RunJournal("r", "t", "alice", max_bytes=3 * size)
    for n in range(1, 8):
        journal.append(data(n))
    assert journal.after(4) == [framed(5), framed(6), framed(7)]
    for gone in (0, 3):
        with pytest.raises(JournalTrimmedError):
            journal.after(gone)


def test_one_frame_larger_than_the_bound_is_still_kept() -> None:
    journal = RunJournal("r", "t", "alice", max_bytes=4)
    journal.append(data(1))
    journal.append(data(2))
    assert journal.after(1) == [framed(2)]


async def test_a_follower_gets_what_was_there_then_live_frames_until_the_end() -> None:
    journal = RunJournal("r", "t", "alice")
    journal.append(data(1))
    follower = asyncio.create_task(collect(journal.follow(0)))
    for n in range(2, 50):
        journal.append(data(n))
        if n % 7 == 0:
            await asyncio.sleep(0)  # let the follower take a batch mid-run
    journal.end()
    assert await asyncio.wait_for(follower, 10) == [framed(n) for n in range(1, 50)]
    assert journal.info().ended


async def test_a_follower_from_the_middle_starts_after_its_id() -> None:
    journal = RunJournal("r", "t", "alice")
    for n in range(1, 11):
        journal.append(data(n))
    journal.end()
    assert await collect(journal.follow(6)) == [framed(n) for n in range(7, 11)]
    assert await collect(journal.follow(10)) == []


async def test_wait_returns_on_a_new_frame_or_the_end() -> None:
    journal = RunJournal("r", "t", "alice")
    waiting = asyncio.create_task(journal.wait(0))
    await asyncio.sleep(0)
    assert not waiting.done()
    journal.append(data(1))
    await asyncio.wait_for(waiting, 5)
    waiting = asyncio.create_task(journal.wait(1))
    await asyncio.sleep(0)
    journal.end()
    await asyncio.wait_for(waiting, 5)


async def test_concurrent_followers_each_get_every_frame_once_in_order() -> None:
    journal = RunJournal("r", "t", "alice")
    followers = []
    for n in range(1, 301):
        journal.append(data(n))
        if n % 50 == 1:  # followers attach at different points of the run
            followers.append(asyncio.create_task(collect(journal.follow(0))))
        if n % 3 == 0:
            await asyncio.sleep(0)
    journal.end()
    results = await asyncio.wait_for(asyncio.gather(*followers), 10)
    expected = [framed(n) for n in range(1, 301)]
    assert all(result == expected for result in results)


async def test_local_journals_find_and_follow_a_run() -> None:
    journals = LocalJournals()
    journal = journals.open("r", "t", "alice")
    assert journals.local("r") is journal
    assert await journals.find("r") == RunInfo("r", "t", "alice", ended=False)
    assert await journals.find("other") is None
    follower = asyncio.create_task(collect(journals.follow("r", 0)))
    journal.append(data(1))
    await asyncio.sleep(0)
    journal.append(data(2))
    journal.end()
    journals.closed(journal)
    assert await asyncio.wait_for(follower, 5) == [framed(1), framed(2)]
    info = await journals.find("r")
    assert info is not None and info.ended
    await journals.close()


async def test_following_an_unknown_or_trimmed_run_fails_before_any_frame() -> None:
    journals = LocalJournals()
    with pytest.raises(JournalTrimmedError):
        await collect(journals.follow("nothing", 0))
    journal = journals.open("r", "t", "alice")
    journal.max_bytes = 2 * len(framed(1))
    for n in range(1, 6):
        journal.append(data(n))
    batches = journals.follow("r", 1)
    with pytest.raises(JournalTrimmedError):
        await anext(batches)
    await journals.close()


async def test_a_journal_is_forgotten_retain_seconds_after_its_run_ended() -> None:
    journals = LocalJournals(retain=0.05)
    journal = journals.open("r", "t", "alice")
    journal.append(data(1))
    await asyncio.sleep(0.1)
    assert journals.local("r") is journal  # a run still going is never forgotten
    journal.end()
    journals.closed(journal)
    assert journals.local("r") is journal
    for _ in range(200):
        if journals.local("r") is None:
            break
        await asyncio.sleep(0.05)
    assert journals.local("r") is None
    assert await journals.find("r") is None
    await journals.close()


async def test_closing_ends_the_runs_kept_so_their_followers_stop() -> None:
    journals = LocalJournals()
    journal = journals.open("r", "t", "alice")
    journal.append(data(1))
    follower = asyncio.create_task(collect(journals.follow("r", 0)))
    await asyncio.sleep(0)
    await journals.close()
    assert await asyncio.wait_for(follower, 5) == [framed(1)]
    assert journals.local("r") is None


# -- budgets --------------------------------------------------------------------------------


def big(n: int, size: int = 100_000) -> bytes:
    """A large frame (a state snapshot, say): ``size`` bytes, its content told by ``n``."""
    head = b'data: {"n": %d, "s": "' % n
    return head + b"x" * (size - len(head) - 4) + b'"}\n\n'


def finish(journals: LocalJournals, run: str, owner: str, frame: bytes) -> RunJournal:
    journal = journals.open(run, "t", owner)
    journal.append(frame)
    journal.end()
    journals.closed(journal)
    return journal


async def test_past_a_users_budget_their_oldest_finished_runs_lose_their_frames_first() -> None:
    journals = LocalJournals(budget_bytes=10_000_000, user_budget_bytes=350_000)
    finish(journals, "bob-1", "bob", big(0))
    for n in range(1, 5):
        finish(journals, f"alice-{n}", "alice", big(n))
    # Alice's fourth run put her past 350 000 bytes: her first went, Bob's stays.
    with pytest.raises(JournalTrimmedError):
        await collect(journals.follow("alice-1", 0))
    info = await journals.find("alice-1")
    assert info == RunInfo("alice-1", "t", "alice", ended=True)  # still known: 410, not 404
    for run, n in (("alice-2", 2), ("alice-4", 4), ("bob-1", 0)):
        assert await collect(journals.follow(run, 0)) == [b"id: 1\n" + big(n)]
    await journals.close()


async def test_past_the_process_budget_the_oldest_finished_runs_go_whoever_ran_them() -> None:
    journals = LocalJournals(budget_bytes=250_000, user_budget_bytes=200_000)
    finish(journals, "bob-1", "bob", big(0))
    running = journals.open("alice-live", "t", "alice")
    running.append(big(1))
    finish(journals, "carol-1", "carol", big(2))
    # Over 250 000 in all: Bob's finished run goes first; the run still going keeps its frames.
    with pytest.raises(JournalTrimmedError):
        await collect(journals.follow("bob-1", 0))
    assert running.after(0) == [b"id: 1\n" + big(1)]
    assert await collect(journals.follow("carol-1", 0)) == [b"id: 1\n" + big(2)]
    await journals.close()


def test_one_run_keeps_no_more_than_a_users_budget() -> None:
    journals = LocalJournals(max_bytes=16_000_000, user_budget_bytes=250_000)
    journal = journals.open("r", "t", "alice")
    for n in range(1, 6):
        journal.append(big(n))
    assert journal.size <= 250_000 and journal.first_id == 4


def test_a_large_frame_equal_to_an_earlier_one_is_kept_once() -> None:
    journal = RunJournal("r", "t", "alice")
    snapshot = big(7, 1_000_000)  # the state the client sent, echoed at the start ...
    journal.append(snapshot)
    journal.append(data(2))
    assert journal.append(big(7, 1_000_000)) == b"id: 3\n" + snapshot  # ... and at the end
    assert journal.size < 1_000_100  # counted (and held) once
    assert journal.after(0) == [b"id: 1\n" + snapshot, framed(2), b"id: 3\n" + snapshot]
    journal.append(big(8, 1_000_000))  # a changed state is kept as itself
    assert journal.size > 2_000_000


def test_trimming_the_first_of_two_shared_frames_keeps_the_second_counted() -> None:
    shared, other = big(7, 1_000_000), big(9, 400_000)
    head = len(b"id: 1\n")
    # Room for everything but the first frame's id line.
    journal = RunJournal("r", "t", "alice", max_bytes=3 * head + 1_400_000 - head)
    journal.append(shared)
    journal.append(shared)
    journal.append(other)  # over the bound: frame 1 goes, frame 2 now holds (and counts) the bytes
    assert journal.first_id == 2
    assert journal.size == 2 * head + 1_400_000
    assert journal.after(1) == [b"id: 2\n" + shared, b"id: 3\n" + other]
    journal.append(data(4))  # frame 2 goes too, and its bytes with it
    assert journal.first_id == 3
    assert journal.size == head + 400_000 + len(framed(4))
