"""The composition root: settings -> catalog, storage, command layer, notification worker.

Adapters (console, Telegram, Discord) get the `App`, call `app.router` and register a notifier;
nothing else wires anything. Platform libraries are imported only by the adapters that start.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

from bot.settings import Settings
from core.anchors.anchor_index import AnchorIndex
from core.anchors.seed import published_anchors
from core.cache import warm
from core.catalog.loader import Catalog, default_catalog
from core.commands.context import BotContext, BotLimits, FollowUps, utcnow
from core.commands.router import CommandRouter
from core.community.delivery import Notifier
from core.community.worker import OutboxSettings, OutboxWorker
from core.render.notices import notice_text
from core.storage.interface import Storage, StorageError

log = logging.getLogger(__name__)


@dataclass
class App:
    settings: Settings
    catalog: Catalog
    storage: Storage
    bot: BotContext
    router: CommandRouter
    worker: OutboxWorker
    notifiers: dict[str, Notifier] = field(default_factory=dict)

    async def start(self, *, read_only: bool = False) -> None:
        """Open the database (migrations), seed the published anchors, load the anchor index.
        `read_only` (`python -m bot ask`): the seeding write is skipped when the stored published
        anchors are current already, so a question never waits for another process's write lock."""
        await self.storage.open()
        await load_anchors(self, read_only=read_only)
        await load_models(self)

    async def close(self) -> None:
        await self.storage.close()

    def add_notifier(self, notifier: Notifier) -> None:
        self.notifiers[notifier.platform] = notifier
        self.worker.add_notifier(notifier)


async def load_anchors(app: App, *, read_only: bool = False) -> None:
    """Seed the published anchors (idempotent), then build the index from every approved one. With
    `read_only`, seeding is done only when something is missing or re-filed (a first run, an upgrade)."""
    items = published_anchors(app.catalog)
    if read_only and await app.storage.published_current(items):
        await refresh_anchors(app)
        return
    try:
        added = await app.storage.add_published(items)
    except StorageError:
        if not read_only:
            raise
        # `bot ask` opens the database without its write lock: anchors newer than the database
        # (an upgrade) are stored by the next bot or console run; this answer uses what is stored.
        log.warning("published anchors newer than the database: run the bot once to store them")
        added = 0
    if added:
        log.info("seeded %d published anchors", added)
    await refresh_anchors(app)


async def load_models(app: App) -> None:
    """Models read from the Hub earlier (by any process on this database) join the catalog overlay."""
    from core.commands.model import load_stored

    try:
        stored = await app.storage.cached_models()
    except Exception:  # noqa: BLE001 - without them a model is looked up again when asked
        log.exception("could not read the stored Hub models")
        return
    added = await load_stored(app.bot, [payload for _key, payload, _at in stored])
    if added:
        log.info("loaded %d models read from the Hub earlier", added)


async def refresh_anchors(app: App) -> bool:
    """Reload the anchor index when the approved set changed behind this process's back (a decision
    made from the console, or by another process on the same database). True when it changed."""
    approved = await app.storage.submissions(status="approved")
    current = app.bot.anchors
    if current is not None and {s.id for s in approved} == {s.id for s in current.all()}:
        return False
    app.bot.anchors = AnchorIndex.from_submissions(approved, app.catalog)
    warm_calibration(app)
    return True


async def keep_anchors_fresh(app: App, stop: asyncio.Event, every_seconds: float = 60.0) -> None:
    """`refresh_anchors` every minute until `stop`; decisions made in this process apply at once
    anyway (the command layer updates the index itself)."""
    while not stop.is_set():
        try:
            await asyncio.wait_for(stop.wait(), timeout=every_seconds)
            return
        except TimeoutError:
            pass
        try:
            if await refresh_anchors(app):
                log.info("anchor index reloaded: the approved set changed in the database")
        except Exception:  # noqa: BLE001 - a failed refresh keeps the index we have; try again later
            log.exception("anchor refresh failed")


def warm_calibration(app: App) -> None:
    """Price every community anchor once now (~0.3 ms each), so the first question about a card
    with anchors doesn't pay for all of them while someone waits."""
    from core.anchors.calibrate import anchor_estimate

    for sub in app.bot.anchors.all():
        if sub.origin == "community":
            anchor_estimate(app.catalog, sub.measurement)


def build_app(
    settings: Settings,
    storage: Storage | None = None,
    catalog: Catalog | None = None,
    clock: Callable[[], datetime] = utcnow,  # a zero-argument callable returning an aware datetime
) -> App:
    if catalog is None:
        warm.configure(settings.cache_dir)  # before the shipped catalog is first read
        catalog = default_catalog()
    if storage is None:
        # PostgreSQL when TOKBOT_DATABASE_URL is set, else the SQLite file (checked here, so a bad
        # TOKBOT_DB_PATH is a sentence and exit 2 before anything starts).
        from bot.storage.select import storage_for

        storage = storage_for(settings)
    limits = BotLimits.from_catalog(catalog, submissions_per_hour=settings.submissions_per_hour)
    bot = BotContext(
        catalog=catalog,
        storage=storage,
        moderators=settings.moderator_policy(),
        limits=limits,
        clock=clock,
        followups=FollowUps(limits.followups_kept),
        default_lang=settings.default_lang,
        default_os=settings.default_os,
        page_url=getattr(settings, "public_url", None),
    )
    from bot.hub.select import model_source_for

    bot.model_source = model_source_for(settings.hub)  # the Hugging Face Hub, when the deployment turns it on
    worker = OutboxWorker(storage, {}, catalog, OutboxSettings.from_catalog(catalog), clock, notice_text)
    bot.on_outbox = worker.wake
    return App(settings, catalog, storage, bot, CommandRouter(bot), worker)
