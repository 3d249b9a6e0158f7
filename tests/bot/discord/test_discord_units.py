"""Command callbacks, responses, notifier and sync, with mocked interactions (python-discord/bot style)
or the fake Discord; plus the canary for the discord.py internals the fake relies on."""

from __future__ import annotations

from unittest.mock import AsyncMock, MagicMock

import discord
import pytest
import yarl

from bot.app import build_app
from bot.discord.adapter import DiscordAdapter
from bot.discord.commands import build_commands
from bot.discord.convert import lang_of, strip_mentions
from bot.discord.modal import PromptModal
from bot.discord.notifier import DiscordNotifier
from bot.discord.sync import sync_commands
from bot.discord.views import TEMPLATE, ActionButton
from bot.settings import Settings
from core.commands.registry import COMMANDS
from core.commands.types import Attachment, Audience, Button, Prompt, Response
from core.storage.memory import MemoryStorage
from tests.fakes.discord_api import FakeDiscord, point_discord_py_at

TOKEN = "MTAxMjM0NTY3ODkwMTIzNDU2Nzg5.GaBcDe.abcdefghijklmnopqrstuvwxyz0123456789AB"
MOD = 102


def test_canary_discord_py_internals_the_fake_patches():
    """Fails loudly on a discord.py upgrade that moves what tests/fakes/discord_api.py patches."""
    assert discord.__version__.startswith("2.7."), "re-check Route.BASE / DEFAULT_GATEWAY, then bump"
    assert discord.http.Route.BASE == "https://discord.com/api/v10"
    assert discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY == yarl.URL("wss://gateway.discord.gg/")
    import discord.webhook.async_ as webhook

    assert webhook.Route is discord.http.Route, "interaction callbacks must follow Route.BASE too"


@pytest.fixture
async def adapter():
    app = build_app(Settings(discord_token=TOKEN, moderators=f"discord:{MOD}"), storage=MemoryStorage())
    await app.start()
    yield DiscordAdapter(app, TOKEN)
    await app.close()


def interaction(
    adapter: DiscordAdapter,
    user_id: int = 101,
    guild: bool = True,
    kind: discord.InteractionType = discord.InteractionType.application_command,
    locale: str = "en-US",
) -> MagicMock:
    i = MagicMock(spec=discord.Interaction)
    i.client = MagicMock()
    i.client.adapter = adapter
    i.type = kind
    i.id = 1
    i.user = MagicMock(spec=discord.User, id=user_id, display_name=f"user{user_id}")
    i.channel_id = 555
    i.guild_id = 42 if guild else None
    i.locale = discord.Locale(locale)
    i.message = None
    i.response = MagicMock()
    for name in ("send_message", "defer", "edit_message", "send_modal"):
        setattr(i.response, name, AsyncMock())
    i.followup = MagicMock()
    i.followup.send = AsyncMock()
    i.edit_original_response = AsyncMock()
    i.delete_original_response = AsyncMock()
    return i


def command(name: str):
    return next(c for c in build_commands() if c.name == name)


def test_one_slash_command_per_command():
    assert tuple(c.name for c in build_commands()) == COMMANDS
    assert len({c.description for c in build_commands()}) == len(COMMANDS)


async def test_help_is_ephemeral_without_mentions(adapter):
    i = interaction(adapter)
    await command("help").callback(i, command=None)
    kwargs = i.response.send_message.await_args.kwargs
    assert kwargs["ephemeral"] is True and "/submit" in kwargs["content"]
    assert kwargs["allowed_mentions"].to_dict() == discord.AllowedMentions.none().to_dict()
    i.response.defer.assert_not_awaited()


async def test_ask_builds_dynamic_buttons_from_response(adapter):
    i = interaction(adapter, locale="zh-CN")
    await command("ask").callback(i, question="V100 32G gemma 3 27b")
    kwargs = i.response.send_message.await_args.kwargs
    assert kwargs["ephemeral"] is False and "```" in kwargs["content"]
    items = kwargs["view"].children
    assert items and all(isinstance(item, ActionButton) for item in items)
    assert all(item.item.custom_id == item.action and item.action.startswith(("v:", "h:")) for item in items)
    assert [item.action[:2] for item in items][-2:] == ["h:", "h:"], "👍 / 👎 last, under the follow-ups"
    assert kwargs["view"].timeout is None


@pytest.mark.parametrize("name,ephemeral", [("review", True), ("export", True), ("accuracy", False)])
async def test_slow_commands_defer_first(adapter, name, ephemeral):
    i = interaction(adapter, user_id=MOD)
    args = {"review": {}, "export": {"format": "json"}, "accuracy": {"scope": None}}[name]
    await command(name).callback(i, **args)
    i.response.defer.assert_awaited_once_with(thinking=True, ephemeral=ephemeral)
    i.response.send_message.assert_not_awaited()
    assert i.edit_original_response.await_count + i.followup.send.await_count >= 1


async def test_export_sends_a_file(adapter):
    i = interaction(adapter, user_id=MOD)
    await command("export").callback(i, format="csv")
    sent = i.edit_original_response.await_args.kwargs
    [file] = sent["attachments"]
    assert file.filename == "tokbot-anchors.csv"


async def test_submit_with_fields_defers_and_a_refusal_turns_private(adapter):
    i = interaction(adapter)
    await command("submit").callback(
        i, gpu="Tesla V100 PCIe 32GB", model="gemma-3-27b-it", quant="Q4_K_M", decode=21.5, ctx="8k"
    )
    i.response.defer.assert_awaited_once_with(thinking=True, ephemeral=False)
    assert "Received as #" in i.edit_original_response.await_args.kwargs["content"]
    bad = interaction(adapter)
    await command("submit").callback(
        bad, gpu="Tesla V100 PCIe 32GB", model="gemma-3-27b-it", quant="Q4_K_M", decode=99999.0
    )
    bad.delete_original_response.assert_awaited_once()  # the public "thinking…" goes,
    assert bad.followup.send.await_args.kwargs["ephemeral"] is True  # the refusal is private


async def test_reject_without_reason_opens_a_modal_whose_answer_runs_the_command(adapter):
    i = interaction(adapter, user_id=MOD)
    await command("reject").callback(i, id=7, reason=None)
    modal = i.response.send_modal.await_args.args[0]
    assert isinstance(modal, PromptModal) and modal.command == "reject 7"
    modal.answer._value = "no log"
    assert modal.line() == "/reject 7 no log"
    answer = interaction(adapter, user_id=MOD, kind=discord.InteractionType.modal_submit)
    await modal.on_submit(answer)
    assert "#7" in answer.response.send_message.await_args.kwargs["content"]  # not found: still answered


async def test_button_edit_replaces_the_message_and_drops_buttons(adapter):
    from bot.discord.reply import Responder

    i = interaction(adapter, kind=discord.InteractionType.component)
    i.message = MagicMock(spec=discord.Message)
    await Responder(i).send_all(
        [Response("Approved #1", edit=True), Response("more", audience=Audience.ASKER)]
    )
    assert i.response.edit_message.await_args.kwargs["view"] is None
    assert i.followup.send.await_args.kwargs == {
        "ephemeral": True,
        "content": "more",
        "allowed_mentions": i.followup.send.await_args.kwargs["allowed_mentions"],
    }


async def test_responder_photo_attachment_and_button_rows(adapter):
    from bot.discord.reply import Responder

    i = interaction(adapter)
    buttons = ((Button("A", "m:a:1", "success"), Button("R", "m:r:1", "danger")), (Button("X", "v:c:1"),))
    await Responder(i).send_all(
        [
            Response("chart", photo=b"\x89PNG", buttons=buttons),
            Response("file", attachment=Attachment("x.json", b"{}", "application/json")),
        ]
    )
    first = i.response.send_message.await_args.kwargs
    assert [f.filename for f in first["files"]] == ["tokbot-chart.png"]
    assert [(b.item.custom_id, b.item.row, b.item.style) for b in first["view"].children] == [
        ("m:a:1", 0, discord.ButtonStyle.success),
        ("m:r:1", 0, discord.ButtonStyle.danger),
        ("v:c:1", 1, discord.ButtonStyle.secondary),
    ]
    assert [f.filename for f in i.followup.send.await_args.kwargs["files"]] == ["x.json"]


async def test_prompt_after_a_defer_becomes_text():
    from bot.discord.reply import Responder

    i = interaction(MagicMock())
    r = Responder(i)
    await r.defer(ephemeral=True)
    await r.send(
        Response("Why reject #3?", audience=Audience.ASKER, prompt=Prompt("Why reject #3?", "reject 3"))
    )
    assert i.edit_original_response.await_args.kwargs["content"].endswith("`/reject 3 …`")


def test_template_and_helpers():
    import re

    assert re.fullmatch(TEMPLATE, "m:a:12") and re.fullmatch(TEMPLATE, "v:q:1f:Q4_K_M")
    assert not re.fullmatch(TEMPLATE, "m:a:1 2") and not re.fullmatch(TEMPLATE, "x" * 101)
    assert lang_of(discord.Locale.taiwan_chinese) == "zh" and lang_of("zh-CN") == "zh"
    assert lang_of("en-GB") == "en" and lang_of("de") is None
    assert strip_mentions("<@!9> V100 27B <@9>", 9) == "V100 27B"


async def test_autocomplete_uses_core_completion(adapter):
    i = interaction(adapter)
    submit = command("submit")
    choices = await submit._params["gpu"].autocomplete(i, "4090")
    assert choices and "4090" in choices[0].name and len(choices) <= 25
    targets = await command("subscribe")._params["target"].autocomplete(i, "")
    assert targets[0].value == "all" and len(targets) == 25


# -- notifier and sync against the fake Discord ------------------------------------------------------


@pytest.fixture
async def fake(monkeypatch):
    fake = FakeDiscord()
    await fake.start()
    point_discord_py_at(fake, monkeypatch)
    yield fake
    await fake.close()


async def test_notifier_outcomes(fake):
    client = discord.Client(intents=discord.Intents.none(), max_ratelimit_timeout=5.0)
    await client.login(TOKEN)
    try:
        n = DiscordNotifier(client)
        assert (await n.deliver("user:201", "hi <@&1>")).outcome == "sent"
        dm = fake.dm_channels[201]
        assert fake.messages[dm][0]["content"] == "hi <@&1>"
        sent = next(c for c in fake.calls if c.path == f"/channels/{dm}/messages")
        assert sent.json["allowed_mentions"] == {"parse": []}
        assert (await n.deliver(str(dm), "again")).outcome == "sent"
        fake.fail_channel(dm, 403, {"message": "Cannot send messages to this user", "code": 50007})
        assert (await n.deliver("user:201", "x")).outcome == "forbidden"
        fake.fail_channel(dm, 404, {"message": "Unknown Channel", "code": 10003})
        assert (await n.deliver(str(dm), "x")).outcome == "forbidden"
        # 503: discord.py retries 500/502/504 itself for ~25 s before raising; 503 is raised at once.
        fake.fail_channel(dm, 503, {"message": "boom", "code": 0})
        assert (await n.deliver(str(dm), "x")).outcome == "retry"
        fake.fail_channel(
            dm,
            429,
            {"message": "slow down", "retry_after": 60.0, "global": False},
            {"Retry-After": "60", "Via": "1.1 google"},
        )
        limited = await n.deliver(str(dm), "x")
        assert limited.outcome == "retry" and limited.retry_after == 60.0
        assert (await n.deliver("user:abc", "x")).outcome == "failed"
    finally:
        await client.close()


async def test_sync_commands_to_guilds(fake):
    lines = await sync_commands(TOKEN, [11, 12])
    assert lines[0].startswith("guild 11: ask, submit")
    assert [c["name"] for c in fake.commands["12"]] == list(COMMANDS)
    submit = next(c for c in fake.commands["11"] if c["name"] == "submit")
    assert {o["name"]: o.get("autocomplete", False) for o in submit["options"]}["gpu"] is True
    assert "zh-CN" in submit["description_localizations"]


async def test_mention_in_channel_and_dm_reach_the_router(fake, monkeypatch, tmp_path):
    app = build_app(Settings(discord_token=TOKEN, db_path=tmp_path / "t.db"), storage=MemoryStorage())
    await app.start()
    adapter = DiscordAdapter(app, TOKEN, guild_ready_timeout=0.05)
    await adapter.start()
    try:
        author = {"id": "301", "username": "eve", "global_name": "eve", "discriminator": "0", "avatar": None}
        bot = fake.bot_user()
        base = {
            "type": 0,
            "tts": False,
            "timestamp": "2025-01-01T00:00:00+00:00",
            "edited_timestamp": None,
            "mention_everyone": False,
            "mention_roles": [],
            "attachments": [],
            "embeds": [],
            "pinned": False,
            "author": author,
        }
        ignored = {
            **base,
            "id": "1",
            "channel_id": str(fake.channel_id),
            "guild_id": str(fake.guild_id),
            "content": "",
            "mentions": [],
            "member": {"roles": [], "joined_at": "2025-01-01T00:00:00+00:00"},
        }
        await fake.dispatch("MESSAGE_CREATE", ignored)
        mention = {
            **ignored,
            "id": "2",
            "content": f"<@{fake.bot_id}> V100 32G gemma 3 27b",
            "mentions": [bot],
        }
        await fake.dispatch("MESSAGE_CREATE", mention)
        replies = await fake.wait_for(lambda: fake.messages.get(fake.channel_id))
        assert "```" in replies[0]["content"] and len(replies) == 1
        dm = {**base, "id": "3", "channel_id": "4444", "content": "/help", "mentions": []}
        await fake.dispatch("MESSAGE_CREATE", dm)
        [help_text] = await fake.wait_for(lambda: fake.messages.get(4444))
        assert "/submit" in help_text["content"]
    finally:
        await adapter.stop()
        await app.close()


async def test_submit_without_options_opens_the_form_whose_answer_submits(adapter):
    from bot.discord.modal import FormModal

    i = interaction(adapter, locale="zh-CN")
    await command("submit").callback(i)
    modal = i.response.send_modal.await_args.args[0]
    assert isinstance(modal, FormModal) and modal.title == "提交实测数据"
    assert tuple(modal.inputs) == ("gpu", "model", "quant", "decode"), "the declared form, in order"
    assert modal.inputs["gpu"].placeholder == "RTX 4090 · 双3090 · V100 32G", "an example, not a message code"
    typed = {"gpu": "RTX 4090", "model": "llama 3 8b", "quant": "Q4_K_M", "decode": "128.5"}
    for name, value in typed.items():
        modal.inputs[name]._value = value
    modal.more._value = "ctx=4096 framework=llama.cpp"
    expected = {**typed, "decode": 128.5, "text": "ctx=4096 framework=llama.cpp"}
    assert modal.values() == expected, "typed arguments, not a command line to parse again"
    answer = interaction(adapter, kind=discord.InteractionType.modal_submit)
    await modal.on_submit(answer)
    answer.response.defer.assert_awaited_once()  # submit may pass Discord's 3 s: it defers
    sent = answer.edit_original_response.await_args or answer.followup.send.await_args
    assert "Received as #" in sent.kwargs["content"]


async def test_every_option_description_is_translated():
    from bot.discord.commands import I18nTranslator
    from core.i18n import messages

    table = messages()
    translator = I18nTranslator()
    seen = 0
    for cmd in build_commands():
        for param in cmd.parameters:
            desc = param.locale_description
            key = desc.extras.get("key")
            assert key in table and table[key]["zh"], (cmd.name, param.name)
            zh = await translator.translate(desc, discord.Locale.chinese, None)  # type: ignore[arg-type]
            assert zh == table[key]["zh"][:100]
            seen += 1
    assert seen >= 20


async def test_typed_intents_on_discord(adapter):
    """Audience: CHAT is public, ASKER and ASKER_PRIVATELY are ephemeral (Discord has them); a prompt
    shown as a modal is forgotten by the router's prompt state (its answer is the modal's submit)."""
    from bot.discord.reply import Responder

    i = interaction(adapter)
    await Responder(i).send_all(
        [
            Response("for all", audience=Audience.CHAT),
            Response("for you", audience=Audience.ASKER),
            Response("cards", audience=Audience.ASKER_PRIVATELY),
        ]
    )
    assert i.response.send_message.await_args.kwargs["ephemeral"] is False
    assert [c.kwargs["ephemeral"] for c in i.followup.send.await_args_list] == [True, True]
    mod = interaction(adapter, user_id=MOD)
    await command("reject").callback(mod, id=7)
    assert isinstance(mod.response.send_modal.await_args.args[0], PromptModal)
    assert len(adapter.app.bot.prompts) == 0, "the modal answers it, not the next message"


def test_slow_and_private_come_from_the_declarations():
    from core.commands.registry import BY_NAME, is_slow_action

    assert BY_NAME["review"].slow and BY_NAME["review"].private and not BY_NAME["accuracy"].private
    assert is_slow_action("v:c:abc") and not is_slow_action("v:f:abc") and not is_slow_action("m:a:1")
