"""The storage contract: what every `Storage` backend must do, as tests.

A backend's test module subclasses `StorageContract` and provides a `storage` fixture yielding an
opened, empty backend (see test_contract.py); a PostgreSQL backend would do the same. Times are
explicit UTC datetimes, never the clock, so the tests are exact.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from core.storage.interface import DuplicateSubmission, NotFound, Storage, UndoRefused, WrongState
from core.storage.records import (
    Actor,
    AuditEntry,
    EstimateSnapshot,
    Measurement,
    NewSubmission,
    OutboxStats,
    Subscription,
)

T0 = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
ALICE = Actor("telegram", "111", "alice")
BOB = Actor("discord", "222", "bob", roles=("9001",))
MOD = Actor("discord", "900", "mod", roles=("42",))


def measurement(gpu: str = "v100-32g", model: str = "gemma-3-27b", tps: float = 20.5) -> Measurement:
    return Measurement(
        gpu_id=gpu,
        model_id=model,
        quant="Q4_K_M",
        decode_tps=tps,
        context=8192,
        prefill_tps=410.0,
        evidence="https://example.invalid/log",
        notes="多卡 test",
    )


def new(
    who: Actor = ALICE,
    at: datetime = T0,
    gpu: str = "v100-32g",
    model: str = "gemma-3-27b",
    fingerprint: str = "",
    chat: str | None = None,
    **extra: object,
) -> NewSubmission:
    return NewSubmission(
        measurement=measurement(gpu, model),
        submitter=who,
        created_at=at,
        chat_id=chat if chat is not None else f"chat-{who.user_id}",
        fingerprint=fingerprint,
        **extra,  # type: ignore[arg-type]
    )


def sub(
    user: str,
    chat: str,
    gpu: str | None = None,
    model: str | None = None,
    platform: str = "telegram",
    lang: str = "en",
) -> Subscription:
    return Subscription(
        platform=platform, user_id=user, chat_id=chat, gpu_id=gpu, model_id=model, lang=lang, created_at=T0
    )


async def drain(storage: Storage, platform: str, now: datetime = T0 + timedelta(hours=1)) -> list:
    return await storage.claim_outbox(platform, now, limit=10_000)


class StorageContract:
    # --- submissions ---------------------------------------------------------------------------
    async def test_add_and_get_round_trip(self, storage: Storage) -> None:
        estimate = EstimateSnapshot(
            decode_low=15,
            decode_mid=18,
            decode_high=22,
            prefill_mid=400,
            fits="smooth",
            engine_version="cal-3",
        )
        details = (("far_from_estimate", '{"decode": 9.5, "low": 15, "high": 22, "mid": 18}'),)
        added = await storage.add_submission(
            new(
                estimate=estimate,
                flags=("far_from_estimate",),
                lang="zh",
                fingerprint="fp1",
                flag_details=details,
            )
        )
        assert added.id > 0 and added.status == "pending" and added.origin == "community"
        got = await storage.get_submission(added.id)
        assert got == added
        assert got.measurement == measurement() and got.estimate == estimate
        assert got.flags == ("far_from_estimate",) and got.lang == "zh" and got.flag_details == details
        assert got.created_at == T0 and got.created_at.tzinfo is not None
        assert got.decided_by is None and got.decided_at is None
        assert await storage.get_submission(added.id + 1000) is None

    async def test_ids_are_distinct(self, storage: Storage) -> None:
        ids = {(await storage.add_submission(new(at=T0 + timedelta(seconds=i)))).id for i in range(5)}
        assert len(ids) == 5

    async def test_naive_datetimes_are_utc(self, storage: Storage) -> None:
        added = await storage.add_submission(new(at=datetime(2026, 1, 1, 12, 0)))
        got = await storage.get_submission(added.id)
        assert got is not None and got.created_at == T0

    async def test_submissions_newest_first_and_filters(self, storage: Storage) -> None:
        a = await storage.add_submission(new(ALICE, T0))
        b = await storage.add_submission(new(BOB, T0 + timedelta(minutes=2)))
        c = await storage.add_submission(new(ALICE, T0 + timedelta(minutes=1)))
        await storage.approve(c.id, MOD, T0 + timedelta(minutes=5))
        await storage.add_published(
            [
                new(
                    Actor("console", "seed", "LocalLLaMA"),
                    T0 - timedelta(days=30),
                    fingerprint="pub1",
                    source="https://example.invalid/post",
                )
            ]
        )
        everything = await storage.submissions()
        assert [s.id for s in everything][:3] == [b.id, c.id, a.id]
        assert [s.id for s in await storage.submissions(status="pending")] == [b.id, a.id]
        assert [s.id for s in await storage.submissions(status="approved", origin="community")] == [c.id]
        assert [s.id for s in await storage.submissions(platform="telegram", user_id="111")] == [c.id, a.id]
        assert [s.id for s in await storage.submissions(platform="discord")] == [b.id]
        assert [s.origin for s in await storage.submissions(origin="published")] == ["published"]
        assert len(await storage.submissions(limit=2)) == 2
        assert await storage.submissions(status="rejected") == []

    async def test_count_submissions_since(self, storage: Storage) -> None:
        for minutes in (0, 10, 20):
            await storage.add_submission(new(ALICE, T0 + timedelta(minutes=minutes)))
        await storage.add_submission(new(BOB, T0 + timedelta(minutes=30)))
        assert await storage.count_submissions_since("telegram", "111", T0 + timedelta(minutes=10)) == 2
        assert await storage.count_submissions_since("telegram", "111", T0 - timedelta(days=1)) == 3
        assert await storage.count_submissions_since("telegram", "222", T0) == 0
        assert await storage.count_submissions_since("discord", "222", T0) == 1

    async def test_find_duplicate_pending_or_approved_only(self, storage: Storage) -> None:
        assert await storage.find_duplicate("fp") is None
        first = await storage.add_submission(new(fingerprint="fp"))
        assert (await storage.find_duplicate("fp")).id == first.id  # type: ignore[union-attr]
        await storage.reject(first.id, MOD, "no log", T0)
        assert await storage.find_duplicate("fp") is None  # a rejected one may be sent again
        second = await storage.add_submission(new(fingerprint="fp", at=T0 + timedelta(hours=1)))
        await storage.approve(second.id, MOD, T0 + timedelta(hours=2))
        assert (await storage.find_duplicate("fp")).id == second.id  # type: ignore[union-attr]
        await storage.add_submission(new(fingerprint=""))
        assert await storage.find_duplicate("") is None

    async def test_add_submission_refuses_a_live_duplicate(self, storage: Storage) -> None:
        first = await storage.add_submission(new(fingerprint="x"))
        with pytest.raises(DuplicateSubmission) as refused:
            await storage.add_submission(new(fingerprint="x", at=T0 + timedelta(seconds=1)))
        assert refused.value.existing_id == first.id
        await storage.reject(first.id, MOD, "no log", T0)
        again = await storage.add_submission(new(fingerprint="x", at=T0 + timedelta(seconds=2)))
        assert again.id != first.id  # a rejected measurement may be sent again
        blanks = [await storage.add_submission(new(fingerprint="")) for _ in range(2)]
        assert blanks[0].id != blanks[1].id  # blank fingerprints never collide

    # --- /submit's check-and-insert ---------------------------------------------------------------
    async def test_checked_submit_stored_duplicate_rate_limited(self, storage: Storage) -> None:
        hour_ago = T0 - timedelta(hours=1)
        first = await storage.add_submission_checked(new(fingerprint="a"), hour_ago, 2)
        assert first.result == "stored" and first.submission is not None
        assert first.submission.status == "pending"
        assert await storage.get_submission(first.submission.id) == first.submission
        dup = await storage.add_submission_checked(new(fingerprint="a"), hour_ago, 2)
        assert dup.result == "duplicate" and dup.submission == first.submission
        assert (await storage.add_submission_checked(new(fingerprint="b"), hour_ago, 2)).result == "stored"
        limited = await storage.add_submission_checked(new(fingerprint="c"), hour_ago, 2)
        assert limited.result == "rate_limited" and limited.submission is None
        # A duplicate is told as such even at the limit (it would not be stored either way).
        assert (await storage.add_submission_checked(new(fingerprint="b"), hour_ago, 2)).result == "duplicate"
        # The limit is per submitter and per window.
        assert (
            await storage.add_submission_checked(new(BOB, fingerprint="bob-c"), hour_ago, 2)
        ).result == "stored"
        later = new(fingerprint="c", at=T0 + timedelta(hours=2))
        assert (await storage.add_submission_checked(later, T0 + timedelta(hours=1), 2)).result == "stored"
        assert len(await storage.submissions(platform="telegram", user_id="111")) == 3

    async def test_a_burst_stores_exactly_the_limit_and_no_duplicate(self, storage: Storage) -> None:
        """Issue 13: 40 concurrent /submit from one user, 10 of them the same measurement, limit 10."""
        limit = 10
        burst = [
            new(fingerprint="same" if i < 10 else f"fp-{i}", at=T0 + timedelta(milliseconds=i))
            for i in range(40)
        ]
        outcomes = await asyncio.gather(
            *(storage.add_submission_checked(n, T0 - timedelta(hours=1), limit) for n in burst)
        )
        results = [o.result for o in outcomes]
        assert results.count("stored") == limit
        stored = await storage.submissions(platform="telegram", user_id="111")
        assert len(stored) == limit
        fingerprints = [s.fingerprint for s in stored]
        assert len(set(fingerprints)) == limit  # no two alike
        assert {o.submission.id for o in outcomes if o.result == "stored"} == {s.id for s in stored}  # type: ignore[union-attr]

    # --- published anchors -----------------------------------------------------------------------
    async def test_add_published_is_idempotent(self, storage: Storage) -> None:
        await storage.subscribe(sub("u1", "c1"))
        items = [
            new(
                Actor("console", "seed", "r/LocalLLaMA"),
                T0,
                fingerprint=f"pub-{i}",
                source="src",
                source_date="2025-11",
            )
            for i in range(3)
        ]
        assert await storage.add_published(items) == 3
        assert await storage.add_published(items) == 0
        assert await storage.add_published(items + [replace(items[0], fingerprint="pub-new")]) == 1
        # Duplicates inside one batch count once too.
        assert (
            await storage.add_published(
                [replace(items[0], fingerprint="x"), replace(items[1], fingerprint="x")]
            )
            == 1
        )
        published = await storage.submissions(origin="published")
        assert len(published) == 5
        assert all(s.status == "approved" and s.origin == "published" for s in published)
        assert {s.source_date for s in published} == {"2025-11"}
        # No outbox, no audit for published anchors.
        assert (await storage.outbox_stats()).pending == 0
        assert await storage.audit_log() == []

    async def test_a_published_row_corrected_at_its_source_is_corrected_where_it_was_seeded(
        self, storage: Storage
    ) -> None:
        """Seeding is by the row's stable key: a row re-filed at its source (another card, its
        memory) reaches a database seeded before, without a second row."""
        seeded = new(Actor("console", "seed"), T0, fingerprint="pub-1", source="src", source_date="2025-09")
        assert await storage.add_published([seeded]) == 1
        m = seeded.measurement
        refiled = replace(
            seeded, measurement=replace(m, gpu_id="rtx-a4000", memory_gib=16.0), source="src#fixed"
        )
        assert await storage.add_published([refiled]) == 0
        (stored,) = await storage.submissions(origin="published")
        assert stored.measurement == refiled.measurement and stored.source == "src#fixed"
        assert stored.status == "approved" and stored.created_at == seeded.created_at
        assert await storage.add_published([refiled]) == 0  # nothing new: nothing written

    async def test_add_published_skips_fingerprint_of_a_community_submission(self, storage: Storage) -> None:
        community = await storage.add_submission(new(fingerprint="same"))
        other = new(fingerprint="same")
        assert (
            await storage.add_published(
                [replace(other, measurement=replace(other.measurement, quant="Q8_0"))]
            )
            == 0
        )
        assert await storage.get_submission(community.id) == community  # never rewritten by a seed

    # --- decisions -------------------------------------------------------------------------------
    async def test_approve_sets_state_audit_and_decision(self, storage: Storage) -> None:
        s = await storage.add_submission(new(lang="zh"))
        at = T0 + timedelta(minutes=3)
        approved = await storage.approve(s.id, MOD, at)
        assert approved.status == "approved" and approved.decided_by == MOD and approved.decided_at == at
        assert approved.reason is None
        assert await storage.get_submission(s.id) == approved
        [entry] = await storage.audit_log()
        assert (entry.action, entry.submission_id, entry.ok, entry.actor, entry.at) == (
            "approve",
            s.id,
            True,
            MOD,
            at,
        )
        [decision] = await drain(storage, "telegram")
        assert decision.kind == "decision" and decision.dedupe_key == f"decision:{s.id}:approved"
        assert (decision.chat_id, decision.user_id, decision.lang) == ("chat-111", "111", "zh")
        assert decision.payload["submission_id"] == s.id and decision.payload["status"] == "approved"
        assert decision.subscription_id is None

    async def test_decisions_check_state(self, storage: Storage) -> None:
        s = await storage.add_submission(new())
        with pytest.raises(NotFound):
            await storage.approve(s.id + 99, MOD, T0)
        with pytest.raises(NotFound):
            await storage.reject(s.id + 99, MOD, "x", T0)
        with pytest.raises(NotFound):
            await storage.withdraw(s.id + 99, MOD, "x", T0)
        with pytest.raises(WrongState) as pending_withdraw:
            await storage.withdraw(s.id, MOD, "x", T0)
        assert pending_withdraw.value.status == "pending" and pending_withdraw.value.submission_id == s.id
        await storage.reject(s.id, MOD, "numbers look off", T0)
        with pytest.raises(WrongState) as err:
            await storage.approve(s.id, MOD, T0)
        assert err.value.status == "rejected"
        with pytest.raises(WrongState):
            await storage.reject(s.id, MOD, "again", T0)
        # A refused change leaves nothing behind: one audit entry, one decision notice.
        assert len(await storage.audit_log()) == 1
        assert len(await drain(storage, "telegram")) == 1

    async def test_approve_twice_is_wrong_state_and_sends_nothing_more(self, storage: Storage) -> None:
        await storage.subscribe(sub("u1", "c1"))
        s = await storage.add_submission(new())
        await storage.approve(s.id, MOD, T0)
        with pytest.raises(WrongState) as err:
            await storage.approve(s.id, MOD, T0)
        assert err.value.status == "approved"
        assert (await storage.outbox_stats()).pending == 2

    async def test_reject(self, storage: Storage) -> None:
        s = await storage.add_submission(new(BOB, chat="dm-bob"))
        rejected = await storage.reject(s.id, MOD, "no evidence", T0 + timedelta(hours=1))
        assert (rejected.status, rejected.reason, rejected.decided_by) == ("rejected", "no evidence", MOD)
        [entry] = await storage.audit_log()
        assert (entry.action, entry.detail) == ("reject", "no evidence")
        [decision] = await drain(storage, "discord")
        assert decision.dedupe_key == f"decision:{s.id}:rejected" and decision.chat_id == "dm-bob"
        assert decision.payload["reason"] == "no evidence"

    async def test_withdraw_community_and_published(self, storage: Storage) -> None:
        s = await storage.add_submission(new())
        await storage.approve(s.id, MOD, T0)
        withdrawn = await storage.withdraw(s.id, MOD, "driver bug", T0 + timedelta(days=1))
        assert (withdrawn.status, withdrawn.reason) == ("withdrawn", "driver bug")
        keys = sorted(i.dedupe_key for i in await drain(storage, "telegram", T0 + timedelta(days=2)))
        assert keys == [f"decision:{s.id}:approved", f"decision:{s.id}:withdrawn"]
        await storage.add_published([new(Actor("console", "seed"), fingerprint="pub")])
        [pub] = await storage.submissions(origin="published")
        assert (await storage.withdraw(pub.id, MOD, "retracted", T0)).status == "withdrawn"
        assert await drain(storage, "console") == []  # nobody to tell about a published one
        assert [e.action for e in await storage.audit_log()] == ["withdraw", "withdraw", "approve"]

    # --- fan-out -----------------------------------------------------------------------------------
    async def test_approve_fans_out_to_matching_subscribers(self, storage: Storage) -> None:
        await storage.subscribe(sub("u-any", "c-any"))
        await storage.subscribe(sub("u-gpu", "c-gpu", gpu="v100-32g", lang="zh"))
        await storage.subscribe(sub("u-model", "c-model", model="gemma-3-27b"))
        await storage.subscribe(sub("u-both", "c-both", gpu="v100-32g", model="gemma-3-27b"))
        await storage.subscribe(sub("u-other-gpu", "c-x", gpu="rtx-4090"))
        await storage.subscribe(sub("u-other-model", "c-y", model="llama-3-70b"))
        await storage.subscribe(sub("u-other-both", "c-z", gpu="v100-32g", model="llama-3-70b"))
        await storage.subscribe(sub("u-gone", "c-gone"))
        await storage.unsubscribe("telegram", "u-gone", None, None)
        await storage.subscribe(sub("u-discord", "d-chat", platform="discord"))
        s = await storage.add_submission(new())
        await storage.approve(s.id, MOD, T0)
        anchors = [i for i in await drain(storage, "telegram") if i.kind == "anchor"]
        assert sorted(i.chat_id for i in anchors) == ["c-any", "c-both", "c-gpu", "c-model"]
        by_chat = {i.chat_id: i for i in anchors}
        assert by_chat["c-gpu"].lang == "zh" and by_chat["c-gpu"].user_id == "u-gpu"
        assert by_chat["c-any"].dedupe_key == f"anchor:{s.id}:telegram:c-any"
        assert by_chat["c-any"].subscription_id is not None
        payload = by_chat["c-any"].payload
        assert (payload["submission_id"], payload["gpu_id"], payload["model_id"], payload["decode_tps"]) == (
            s.id,
            "v100-32g",
            "gemma-3-27b",
            20.5,
        )
        assert payload["credit"] == "alice"
        [discord] = await drain(storage, "discord")
        assert discord.chat_id == "d-chat" and discord.kind == "anchor"

    async def test_one_notice_per_chat_with_overlapping_subscriptions(self, storage: Storage) -> None:
        # Two people in one group, one of them with three overlapping subscriptions.
        first, _ = await storage.subscribe(sub("u1", "group", lang="zh"))
        await storage.subscribe(sub("u1", "group", gpu="v100-32g"))
        await storage.subscribe(sub("u1", "group", model="gemma-3-27b"))
        await storage.subscribe(sub("u2", "group", gpu="v100-32g", model="gemma-3-27b"))
        await storage.subscribe(sub("u3", "group", platform="discord"))  # same chat id, other platform
        s = await storage.add_submission(new())
        await storage.approve(s.id, MOD, T0)
        anchors = [i for i in await drain(storage, "telegram") if i.kind == "anchor"]
        assert len(anchors) == 1
        assert anchors[0].subscription_id == first.id and anchors[0].lang == "zh"  # oldest subscription wins
        assert len(await drain(storage, "discord")) == 1

    async def test_submitter_subscribed_gets_notice_and_decision(self, storage: Storage) -> None:
        await storage.subscribe(sub("111", "chat-111"))
        s = await storage.add_submission(new())
        await storage.approve(s.id, MOD, T0)
        kinds = sorted(i.kind for i in await drain(storage, "telegram"))
        assert kinds == ["anchor", "decision"]

    # --- audit ---------------------------------------------------------------------------------------
    async def test_record_audit_of_refused_attempts(self, storage: Storage) -> None:
        await storage.record_audit(
            AuditEntry(
                at=T0,
                actor=BOB,
                action="refused:approve",
                submission_id=7,
                ok=False,
                detail="not a moderator",
            )
        )
        await storage.record_audit(
            AuditEntry(
                at=T0 + timedelta(seconds=1),
                actor=ALICE,
                action="refused:reject",
                submission_id=None,
                ok=False,
            )
        )
        log = await storage.audit_log()
        assert [e.action for e in log] == ["refused:reject", "refused:approve"]
        assert log[1].actor == BOB and log[1].actor.roles == ("9001",)
        assert (log[1].ok, log[1].submission_id, log[1].detail) == (False, 7, "not a moderator")
        assert log[0].submission_id is None
        assert log[0].id != log[1].id and log[0].id > 0

    async def test_audit_log_newest_first_and_limit(self, storage: Storage) -> None:
        for i in (3, 1, 2):
            await storage.record_audit(
                AuditEntry(
                    at=T0 + timedelta(minutes=i), actor=MOD, action=f"a{i}", submission_id=None, ok=True
                )
            )
        assert [e.action for e in await storage.audit_log()] == ["a3", "a2", "a1"]
        assert [e.action for e in await storage.audit_log(limit=2)] == ["a3", "a2"]

    # --- refused attempts aggregated, audit views (issue 13) -------------------------------------------
    async def test_refused_attempts_are_counted_per_actor_action_and_minute(self, storage: Storage) -> None:
        def refused(at: datetime, who: Actor = BOB, action: str = "refused:approve") -> AuditEntry:
            return AuditEntry(
                at=at, actor=who, action=action, submission_id=7, ok=False, detail="not a moderator"
            )

        for second in range(50):  # a flood within one minute: one row
            await storage.record_refused(refused(T0 + timedelta(seconds=second % 60, microseconds=second)))
        await storage.record_refused(refused(T0 + timedelta(seconds=5), action="refused:reject"))
        await storage.record_refused(refused(T0 + timedelta(seconds=6), who=ALICE))
        await storage.record_refused(refused(T0 + timedelta(minutes=1, seconds=1)))  # the next minute
        await storage.record_audit(AuditEntry(at=T0, actor=MOD, action="approve", submission_id=1, ok=True))
        rows = await storage.audit_log(kind="refused")
        counts = sorted((e.actor.user_id, e.action, e.at, e.count) for e in rows)
        assert counts == [
            ("111", "refused:approve", T0, 1),
            ("222", "refused:approve", T0, 50),
            ("222", "refused:approve", T0 + timedelta(minutes=1), 1),
            ("222", "refused:reject", T0, 1),
        ]
        assert all(not e.ok for e in rows)
        assert [e.action for e in await storage.audit_log(kind="decisions")] == ["approve"]
        assert len(await storage.audit_log()) == 5

    async def test_concurrent_refused_attempts_make_one_row(self, storage: Storage) -> None:
        entry = AuditEntry(at=T0, actor=BOB, action="refused:approve", submission_id=None, ok=False)
        await asyncio.gather(*(storage.record_refused(entry) for _ in range(40)))
        [row] = await storage.audit_log(kind="refused")
        assert row.count == 40

    async def test_undo_rejection_by_its_moderator(self, storage: Storage) -> None:
        s = await storage.add_submission(new())
        await storage.reject(s.id, MOD, "oops", T0)
        outcome = await storage.undo_decision(s.id, MOD, T0 + timedelta(minutes=2), since=T0)
        assert outcome.submission.status == "pending" and outcome.submission.reason is None
        assert outcome.notices_sent == 0
        assert await drain(storage, ALICE.platform) == []  # the unsent rejection notice is dropped
        assert [e.action for e in await storage.audit_log(kind="decisions")] == ["undo:reject", "reject"]
        # Decided again: a fresh notice is queued.
        await storage.approve(s.id, MOD, T0 + timedelta(minutes=3))
        assert [i.kind for i in await drain(storage, ALICE.platform)] == ["decision"]

    async def test_undo_approval_counts_notices_already_sent(self, storage: Storage) -> None:
        await storage.subscribe(sub("333", "chat-333"))
        s = await storage.add_submission(new())
        await storage.approve(s.id, MOD, T0)
        items = await drain(storage, "telegram")
        sent_one = next(i for i in items if i.kind == "anchor")
        await storage.mark_sent(sent_one.id, T0 + timedelta(seconds=1))
        outcome = await storage.undo_decision(s.id, MOD, T0 + timedelta(minutes=1), since=T0)
        assert outcome.notices_sent == 1 and outcome.submission.status == "pending"
        assert await drain(storage, "telegram", now=T0 + timedelta(days=1)) == []
        assert (await storage.get_submission(s.id)).status == "pending"

    async def test_undo_refused_for_others_late_or_undecided(self, storage: Storage) -> None:
        s = await storage.add_submission(new())
        with pytest.raises(WrongState):
            await storage.undo_decision(s.id, MOD, T0, since=T0)
        with pytest.raises(NotFound):
            await storage.undo_decision(9999, MOD, T0, since=T0)
        await storage.reject(s.id, MOD, "no log", T0)
        other_mod = Actor("discord", "901", "other", roles=("42",))
        with pytest.raises(UndoRefused):
            await storage.undo_decision(s.id, other_mod, T0, since=T0)
        with pytest.raises(UndoRefused):  # past its window
            await storage.undo_decision(s.id, MOD, T0 + timedelta(hours=1), since=T0 + timedelta(minutes=50))
        assert (await storage.get_submission(s.id)).status == "rejected"
        assert [e.action for e in await storage.audit_log()] == ["reject"]

    async def test_undo_rejection_refused_when_a_copy_came_in_meanwhile(self, storage: Storage) -> None:
        s = await storage.add_submission(new(fingerprint="fp-1"))
        await storage.reject(s.id, MOD, "dup", T0)
        again = await storage.add_submission(new(fingerprint="fp-1", at=T0 + timedelta(minutes=1)))
        with pytest.raises(DuplicateSubmission):
            await storage.undo_decision(s.id, MOD, T0 + timedelta(minutes=2), since=T0)
        assert (await storage.get_submission(again.id)).status == "pending"

    # --- subscriptions ---------------------------------------------------------------------------------
    async def test_subscribe_twice_updates(self, storage: Storage) -> None:
        first, created = await storage.subscribe(sub("u1", "c1", gpu="v100-32g"))
        assert created and first.id > 0 and first.active and first.created_at == T0
        again, created = await storage.subscribe(sub("u1", "c2", gpu="v100-32g", lang="zh"))
        assert not created and again.id == first.id
        assert (again.chat_id, again.lang) == ("c2", "zh")
        assert await storage.count_subscriptions() == 1
        # Reactivation after unsubscribing is the same row.
        assert await storage.unsubscribe("telegram", "u1", "v100-32g", None) == 1
        back, created = await storage.subscribe(sub("u1", "c1", gpu="v100-32g"))
        assert not created and back.id == first.id and back.active
        # "Any" (None) and a specific id are different subscriptions.
        _, created = await storage.subscribe(sub("u1", "c1"))
        assert created
        assert [s.gpu_id for s in await storage.subscriptions_of("telegram", "u1")] == ["v100-32g", None]

    async def test_subscribe_sets_created_at_when_missing(self, storage: Storage) -> None:
        stored, _ = await storage.subscribe(replace(sub("u1", "c1"), created_at=None))
        assert stored.created_at is not None and stored.created_at.tzinfo is not None

    async def test_unsubscribe_one_and_everything(self, storage: Storage) -> None:
        await storage.subscribe(sub("u1", "c1", gpu="v100-32g"))
        await storage.subscribe(sub("u1", "c1", model="gemma-3-27b"))
        await storage.subscribe(sub("u1", "c1"))
        await storage.subscribe(sub("u2", "c2"))
        assert await storage.unsubscribe("telegram", "u1", "rtx-4090", None) == 0
        assert await storage.unsubscribe("telegram", "u1", None, "gemma-3-27b") == 1
        assert await storage.unsubscribe("telegram", "u1", None, "gemma-3-27b") == 0  # already inactive
        assert len(await storage.subscriptions_of("telegram", "u1")) == 2
        assert await storage.unsubscribe("telegram", "u1", None, None, everything=True) == 2
        assert await storage.subscriptions_of("telegram", "u1") == []
        assert await storage.count_subscriptions() == 1
        assert await storage.unsubscribe("discord", "u2", None, None, everything=True) == 0  # other platform

    async def test_subscriptions_of_active_only_in_order(self, storage: Storage) -> None:
        a, _ = await storage.subscribe(sub("u1", "c1", gpu="a"))
        b, _ = await storage.subscribe(sub("u1", "c1", gpu="b"))
        await storage.subscribe(sub("u1", "c1", gpu="c"))
        await storage.unsubscribe("telegram", "u1", "c", None)
        await storage.subscribe(sub("u1", "c1", gpu="d", platform="discord"))
        assert [s.id for s in await storage.subscriptions_of("telegram", "u1")] == [a.id, b.id]

    async def test_deactivate_chat(self, storage: Storage) -> None:
        await storage.subscribe(sub("u1", "blocked"))
        await storage.subscribe(sub("u2", "blocked", gpu="v100-32g"))
        await storage.subscribe(sub("u3", "fine"))
        await storage.subscribe(sub("u4", "blocked", platform="discord"))
        assert await storage.deactivate_chat("telegram", "blocked") == 2
        assert await storage.deactivate_chat("telegram", "blocked") == 0
        assert await storage.count_subscriptions() == 2
        s = await storage.add_submission(new())
        await storage.approve(s.id, MOD, T0)
        anchors = [i.chat_id for i in await drain(storage, "telegram") if i.kind == "anchor"]
        assert anchors == ["fine"]

    # --- outbox ----------------------------------------------------------------------------------------
    async def _three_items(self, storage: Storage) -> None:
        for user, chat in (("u1", "c1"), ("u2", "c2"), ("u3", "c3")):
            await storage.subscribe(sub(user, chat, platform="discord"))
        s = await storage.add_submission(new(BOB, chat="dm"))
        await storage.approve(s.id, MOD, T0)  # 3 anchors + 1 decision, all on discord

    async def test_claim_leases_items(self, storage: Storage) -> None:
        await self._three_items(storage)
        first = await storage.claim_outbox("discord", T0, limit=2, lease_seconds=30)
        assert len(first) == 2 and all(i.attempts == 0 for i in first)
        assert [i.id for i in first] == sorted(i.id for i in first)  # oldest first
        second = await storage.claim_outbox("discord", T0, limit=10, lease_seconds=30)
        assert len(second) == 2 and not {i.id for i in first} & {i.id for i in second}
        assert await storage.claim_outbox("discord", T0 + timedelta(seconds=29), limit=10) == []
        assert await storage.claim_outbox("telegram", T0, limit=10) == []
        # The worker holding the first two died: after the lease they are due again (at-least-once).
        again = await storage.claim_outbox("discord", T0 + timedelta(seconds=30), limit=10)
        assert {i.id for i in again} == {i.id for i in first} | {i.id for i in second}

    async def test_claim_not_before_created(self, storage: Storage) -> None:
        await self._three_items(storage)
        assert await storage.claim_outbox("discord", T0 - timedelta(seconds=1), limit=10) == []

    async def test_claim_one_chat(self, storage: Storage) -> None:
        await self._three_items(storage)
        [item] = await storage.claim_outbox("discord", T0, limit=10, chat_id="c2")
        assert item.chat_id == "c2"
        assert await storage.claim_outbox("discord", T0, limit=10, chat_id="c2") == []

    async def test_mark_sent(self, storage: Storage) -> None:
        await self._three_items(storage)
        items = await storage.claim_outbox("discord", T0, limit=10, lease_seconds=5)
        for item in items[:3]:
            await storage.mark_sent(item.id, T0 + timedelta(seconds=1))
        # Sent items never come back, even after their lease.
        later = await storage.claim_outbox("discord", T0 + timedelta(hours=1), limit=10)
        assert [i.id for i in later] == [items[3].id]
        stats = await storage.outbox_stats()
        assert (stats.pending, stats.sent, stats.dead) == (1, 3, 0)
        assert stats.by_platform == {"discord": 1}

    async def test_mark_retry(self, storage: Storage) -> None:
        await self._three_items(storage)
        [item] = await storage.claim_outbox("discord", T0, limit=1, lease_seconds=300)
        retry_at = T0 + timedelta(seconds=10)
        await storage.mark_retry(item.id, retry_at, "429 too many requests")
        # Not before its time, even though the lease was released...
        early = await storage.claim_outbox("discord", T0 + timedelta(seconds=9), limit=10)
        assert item.id not in {i.id for i in early}
        # ...and due at its time, with the failed attempt counted.
        [back] = await storage.claim_outbox("discord", retry_at, limit=10, chat_id=item.chat_id)
        assert back.id == item.id and back.attempts == 1 and back.next_attempt_at == retry_at
        await storage.mark_retry(back.id, retry_at + timedelta(seconds=20), "timeout")
        later = T0 + timedelta(minutes=5)
        [third] = await storage.claim_outbox("discord", later, limit=10, chat_id=item.chat_id)
        assert third.attempts == 2 and third.payload == item.payload

    async def test_mark_dead(self, storage: Storage) -> None:
        await self._three_items(storage)
        [item] = await storage.claim_outbox("discord", T0, limit=1, lease_seconds=1)
        await storage.mark_dead(item.id, "403 bot was blocked")
        later = await storage.claim_outbox("discord", T0 + timedelta(hours=1), limit=10)
        assert item.id not in {i.id for i in later}
        stats = await storage.outbox_stats()
        assert (stats.pending, stats.dead) == (3, 1)
        # A late retry report from a worker whose lease ran out doesn't bring it back.
        await storage.mark_retry(item.id, T0, "late")
        assert (await storage.outbox_stats()).dead == 1

    async def test_mark_unknown_item(self, storage: Storage) -> None:
        with pytest.raises(NotFound):
            await storage.mark_sent(12345, T0)
        with pytest.raises(NotFound):
            await storage.mark_retry(12345, T0, "x")
        with pytest.raises(NotFound):
            await storage.mark_dead(12345, "x")

    async def test_outbox_stats_by_platform(self, storage: Storage) -> None:
        assert await storage.outbox_stats() == OutboxStats()
        await storage.subscribe(sub("t1", "tc"))
        await storage.subscribe(sub("d1", "dc", platform="discord"))
        await storage.subscribe(sub("d2", "dc2", platform="discord"))
        s = await storage.add_submission(new())  # submitter on telegram
        await storage.approve(s.id, MOD, T0)
        stats = await storage.outbox_stats()
        assert stats.pending == 4 and stats.by_platform == {"telegram": 2, "discord": 2}

    async def test_payloads_are_independent_copies(self, storage: Storage) -> None:
        await self._three_items(storage)
        items = await storage.claim_outbox("discord", T0, limit=10)
        items[0].payload["mutated"] = True
        again = await storage.claim_outbox("discord", T0 + timedelta(hours=1), limit=10)
        assert all("mutated" not in i.payload for i in again)

    # --- concurrency ----------------------------------------------------------------------------------
    async def test_concurrent_changes_do_not_interleave(self, storage: Storage) -> None:
        await storage.subscribe(sub("u1", "c1"))
        added = await asyncio.gather(
            *(storage.add_submission(new(at=T0 + timedelta(seconds=i))) for i in range(20))
        )
        assert len({s.id for s in added}) == 20
        await asyncio.gather(
            *(storage.approve(s.id, MOD, T0) for s in added[:10]),
            *(storage.reject(s.id, MOD, "no", T0) for s in added[10:]),
            *(storage.claim_outbox("telegram", T0, limit=5) for _ in range(5)),
        )
        assert len(await storage.submissions(status="approved")) == 10
        assert (await storage.outbox_stats()).pending == 10 * 2 + 10
        assert len(await storage.audit_log(limit=100)) == 20

    # --- models resolved outside the catalog -------------------------------------------------------
    async def test_resolved_model_cache_keeps_the_latest_per_key(self, storage: Storage) -> None:
        key = "qwen/qwen3-8b"
        assert await storage.cached_model(key) is None
        await storage.cache_model(key, '{"name": "Qwen3 8B", "params_b": 8.19}', datetime(2026, 1, 1, 12, 0))
        first = await storage.cached_model(key)
        assert first is not None and json.loads(first[0]) == {"name": "Qwen3 8B", "params_b": 8.19}
        assert first[1] == T0 and first[1].tzinfo is not None
        await storage.cache_model(key, '{"name": "Qwen3 8B", "params_b": 8.2}', T0 + timedelta(days=1))
        again = await storage.cached_model(key)
        assert (
            again is not None
            and json.loads(again[0])["params_b"] == 8.2
            and again[1] == T0 + timedelta(days=1)
        )
        assert await storage.cached_model("other/model") is None

    # --- lifecycle -----------------------------------------------------------------------------------
    async def test_open_is_idempotent(self, storage: Storage) -> None:
        s = await storage.add_submission(new())
        await storage.open()
        assert await storage.get_submission(s.id) is not None

    # --- "was this helpful?" ------------------------------------------------------------------------
    # One test, counting from what is there: PostgreSQL's per-test emptying may keep earlier votes.
    async def test_feedback_one_vote_per_person_per_answer_changeable(self, storage: Storage) -> None:
        from core.storage.records import Feedback

        before = await storage.feedback_counts()
        run = f"{id(storage):x}"

        def vote(who: Actor, answer: str, helpful: bool, at: datetime) -> Feedback:
            return Feedback(
                answer_key=f"{run}-{answer}", voter=who, chat_id=f"chat-{who.user_id}", helpful=helpful,
                question="V100 32G 27B 多少 token", query='{"gpu_id": "v100-32g", "model_id": "gemma-3-27b"}',
                reply="V100 32G · Gemma 3 27B\nQ4_K_M 21 tok/s", engine_version="cal-3", lang="zh", at=at,
            )  # fmt: skip

        assert await storage.record_feedback(vote(ALICE, "a", True, T0)) is True
        assert await storage.record_feedback(vote(BOB, "a", False, T0 + timedelta(seconds=1))) is True
        assert await storage.record_feedback(vote(ALICE, "a", False, T0 + timedelta(seconds=2))) is False
        assert await storage.record_feedback(vote(ALICE, "b", True, T0 + timedelta(seconds=3))) is True
        after = await storage.feedback_counts()
        assert (after.helpful - before.helpful, after.unhelpful - before.unhelpful) == (1, 2)
        mine = [f for f in await storage.unhelpful_feedback(limit=100) if f.answer_key.startswith(run)]
        assert [(f.voter.user_id, f.answer_key) for f in mine] == [("111", f"{run}-a"), ("222", f"{run}-a")]
        newest = mine[0]
        assert newest.at == T0 + timedelta(seconds=2) and newest.at.tzinfo is not None
        assert newest.question == "V100 32G 27B 多少 token" and newest.reply.startswith("V100 32G")
        assert json.loads(newest.query) == {"gpu_id": "v100-32g", "model_id": "gemma-3-27b"}
        assert (newest.engine_version, newest.lang, newest.chat_id) == ("cal-3", "zh", "chat-111")
        assert newest.voter == Actor("telegram", "111", "alice")

    # --- models resolved outside the catalog: all of them (the catalog overlay at start) ----------
    async def test_cached_models_lists_every_resolved_model(self, storage: Storage) -> None:
        run = f"{id(storage):x}"
        await storage.cache_model(f"{run}/a", '{"v": 1}', T0)
        await storage.cache_model(f"{run}/b", '{"v": 2}', T0 + timedelta(hours=1))
        await storage.cache_model(f"{run}/a", '{"v": 3}', T0 + timedelta(hours=2))
        mine = [r for r in await storage.cached_models() if r[0].startswith(run)]
        assert [(k, json.loads(p)["v"]) for k, p, _ in mine] == [(f"{run}/a", 3), (f"{run}/b", 2)]
        assert mine[0][2] == T0 + timedelta(hours=2) and mine[0][2].tzinfo is not None
