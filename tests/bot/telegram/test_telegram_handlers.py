"""Handler level: real PTB Application and handlers, the Bot API answered in process (no sockets).

Each test feeds Bot API update dicts to `process_update` and looks at the calls the bot made."""

from __future__ import annotations

import re

from telegram import BotCommandScope

from bot.telegram.handlers import actor_of
from bot.telegram.menu import GROUP_COMMANDS
from core.commands.registry import COMMANDS
from core.commands.types import ACTION_MAX_BYTES
from core.i18n import translate
from tests.bot.telegram.conftest import MODERATOR, QUESTION, SUBMISSION, Harness
from tests.fakes.telegram_api import BOT_USERNAME


def submission_id(text: str) -> int:
    return int(re.search(r"Received as #(\d+)", text).group(1))  # type: ignore[union-attr]


async def test_menus_per_scope_and_language(tg: Harness):
    menus = tg.fake.of("setMyCommands")
    assert len(menus) == 4
    by_key = {(c.params["scope"]["type"], c.params.get("language_code")): c.params["commands"] for c in menus}
    private, group = BotCommandScope.ALL_PRIVATE_CHATS, BotCommandScope.ALL_GROUP_CHATS
    assert [c["command"] for c in by_key[(private, None)]] == list(COMMANDS)
    assert [c["command"] for c in by_key[(group, None)]] == list(GROUP_COMMANDS)
    assert by_key[(private, "zh")][0]["description"] == translate("cmd.ask.summary", "zh")
    assert all(0 < len(c["description"]) <= 256 for commands in by_key.values() for c in commands)


async def test_private_command_answered_in_html(tg: Harness):
    alice = tg.fake.user(1001, "Alice")
    await tg.say(alice, "/help")
    [reply, *_] = tg.fake.sent
    assert reply.params["parse_mode"] == "HTML" and "/submit" in reply.text
    assert "reply_parameters" not in reply.params, "no quoting in a private chat"


async def test_group_command_with_bot_name_quotes_the_question(tg: Harness):
    alice, group = tg.fake.user(1001, "Alice"), tg.fake.group()
    message = await tg.say(alice, f"/help@{BOT_USERNAME}", group)
    assert tg.fake.sent and tg.fake.sent[0].params["reply_parameters"]["message_id"] == message["message_id"]
    before = len(tg.fake.sent)
    await tg.say(alice, "/help@some_other_bot", group)
    assert len(tg.fake.sent) == before, "a command for another bot is not ours"


async def test_unknown_command_only_when_addressed(tg: Harness):
    alice, group = tg.fake.user(1001, "Alice"), tg.fake.group()
    await tg.say(alice, "/bogus")
    assert "There is no /bogus command." in tg.fake.sent[-1].text
    before = len(tg.fake.sent)
    await tg.say(alice, "/bogus", group)
    assert len(tg.fake.sent) == before
    await tg.say(alice, f"/bogus@{BOT_USERNAME}", group)
    assert "There is no /bogus command." in tg.fake.sent[-1].text


async def test_private_question_gets_table_and_buttons(tg: Harness):
    await tg.say(tg.fake.user(1001, "Alice"), QUESTION)
    [reply] = tg.fake.sent
    assert "<pre>" in reply.text and "Q4_K_M" in reply.text
    assert reply.buttons and all(len(b["callback_data"].encode()) <= ACTION_MAX_BYTES for b in reply.buttons)


async def test_group_free_text_needs_a_mention_or_a_reply(tg: Harness):
    alice, group = tg.fake.user(1001, "Alice"), tg.fake.group()
    await tg.say(alice, QUESTION, group)
    assert not tg.fake.sent, "privacy: plain group chatter is not for the bot"
    mention = await tg.say(alice, f"@{BOT_USERNAME} {QUESTION}", group)
    [answer] = tg.fake.sent
    assert "<pre>" in answer.text and answer.params["reply_parameters"]["message_id"] == mention["message_id"]
    await tg.say(alice, "and on 2x V100 32G gemma 3 27b?", group, reply_to=answer.message)
    assert len(tg.fake.sent) == 2 and "<pre>" in tg.fake.sent[1].text


async def test_button_press_answers_callback_then_routes(tg: Harness):
    alice = tg.fake.user(1001, "Alice")
    await tg.say(alice, QUESTION)
    [answer] = tg.fake.sent
    frameworks = next(b for b in answer.buttons if b["callback_data"].startswith("v:f:"))
    start = len(tg.fake.calls)
    await tg.press(alice, answer.message, frameworks["callback_data"])
    methods = [c.method for c in tg.new(start)]
    assert methods[0] == "answerCallbackQuery" and "sendMessage" in methods
    assert "llama" in tg.fake.sent[-1].text.lower()


async def test_forged_moderation_callback_is_refused_and_audited(tg: Harness, app):
    alice, mallory = tg.fake.user(1001, "Alice"), tg.fake.user(666, "Mallory")
    await tg.say(alice, SUBMISSION)
    sid = submission_id(tg.fake.sent[-1].text)
    await tg.say(mallory, "hi")
    await tg.press(mallory, tg.fake.sent[-1].message, f"m:a:{sid}")
    assert "Only moderators" in tg.fake.sent[-1].text
    assert (await app.storage.get_submission(sid)).status == "pending"
    refused = [e for e in await app.storage.audit_log() if e.action.startswith("refused:")]
    assert refused and refused[0].actor.key == "telegram:666"


async def test_moderator_review_approve_button_edits_card(tg: Harness, app):
    alice, bob = tg.fake.user(1001, "Alice"), tg.fake.user(MODERATOR, "Bob")
    await tg.say(alice, SUBMISSION)
    sid = submission_id(tg.fake.sent[-1].text)
    await tg.say(bob, "/review")
    card = next(c for c in tg.fake.sent if any(b["callback_data"] == f"m:a:{sid}" for b in c.buttons))
    await tg.press(bob, card.message, f"m:a:{sid}")
    [edit] = tg.fake.of("editMessageText")
    assert edit.params["message_id"] == card.message["message_id"]
    assert f"Approved #{sid}" in edit.params["text"]
    # The approve/reject buttons go once decided; only the moderator's Undo is left.
    assert edit.params["reply_markup"]["inline_keyboard"] == [
        [{"callback_data": f"m:u:{sid}", "text": "Undo"}]
    ]
    assert (await app.storage.get_submission(sid)).status == "approved"


async def test_reject_prompt_force_reply_round_trip(tg: Harness, app):
    alice, bob = tg.fake.user(1001, "Alice"), tg.fake.user(MODERATOR, "Bob")
    await tg.say(alice, SUBMISSION)
    sid = submission_id(tg.fake.sent[-1].text)
    group = tg.fake.group()
    await tg.say(bob, f"/reject {sid}", group)
    question = tg.fake.sent[-1]
    assert question.params["reply_markup"]["force_reply"] is True and f"#{sid}" in question.text
    await tg.say(alice, "not a reason", group, reply_to=question.message)  # someone else's reply: a message
    assert (await app.storage.get_submission(sid)).status == "pending"
    await tg.say(bob, "no command line given", group, reply_to=question.message)
    assert f"Rejected #{sid}" in tg.fake.sent[-1].text
    sub = await app.storage.get_submission(sid)
    assert sub.status == "rejected" and sub.reason == "no command line given"


async def test_group_prompt_only_taken_by_a_reply_to_the_question(tg: Harness, app):
    """A moderator's mention or reply to another bot message, while a reject reason is pending, is a
    question of its own: the submission stays pending and the prompt still takes the real reply."""
    alice, bob = tg.fake.user(1001, "Alice"), tg.fake.user(MODERATOR, "Bob")
    await tg.say(alice, SUBMISSION)
    sid = submission_id(tg.fake.sent[-1].text)
    group = tg.fake.group()
    await tg.say(bob, f"@{BOT_USERNAME} {QUESTION}", group)
    answer = tg.fake.sent[-1]
    await tg.say(bob, f"/reject {sid}", group)
    question = tg.fake.sent[-1]
    await tg.say(bob, f"@{BOT_USERNAME} and on 2x V100 32G gemma 3 27b?", group)
    assert "<pre>" in tg.fake.sent[-1].text, "a mention is answered as a question"
    await tg.say(bob, "what about Q8_0 then", group, reply_to=answer.message)
    assert (await app.storage.get_submission(sid)).status == "pending"
    await tg.say(bob, "numbers far above the card's bandwidth", group, reply_to=question.message)
    sub = await app.storage.get_submission(sid)
    assert sub.status == "rejected" and sub.reason == "numbers far above the card's bandwidth"


async def test_private_prompt_takes_the_next_line(tg: Harness, app):
    alice, bob = tg.fake.user(1001, "Alice"), tg.fake.user(MODERATOR, "Bob")
    await tg.say(alice, SUBMISSION)
    sid = submission_id(tg.fake.sent[-1].text)
    await tg.say(bob, f"/reject {sid}")
    await tg.say(bob, "duplicate of an older run")
    assert (await app.storage.get_submission(sid)).reason == "duplicate of an older run"


async def test_guided_submit_in_a_group_through_replies(tg: Harness):
    dave, group = tg.fake.user(1002, "Dave"), tg.fake.group()
    await tg.say(dave, "/submit", group)
    for answer in ("RTX 4090", "llama 3 8b", "Q4_K_M", "131"):
        question = tg.fake.sent[-1]
        assert question.params["reply_markup"].get("force_reply"), question.text
        await tg.say(dave, answer, group, reply_to=question.message)
    assert "Received as #" in tg.fake.sent[-1].text


async def test_subscribe_in_group_links_to_private_chat(tg: Harness):
    carol, group = tg.fake.user(1003, "Carol"), tg.fake.group()
    await tg.say(carol, "/subscribe V100 32G", group)
    [link] = [b for b in tg.fake.sent[-1].buttons if "url" in b]
    assert link["url"] == f"https://t.me/{BOT_USERNAME}?start=subscribe"
    await tg.say(carol, "/start subscribe")
    assert "/subscribe" in tg.fake.sent[-1].text and tg.fake.sent[-1].chat_id == 1003
    await tg.say(carol, "/subscribe V100 32G")
    assert "Subscribed" in tg.fake.sent[-1].text


async def test_start_welcomes_with_help_and_chinese_hint(tg: Harness):
    await tg.say(tg.fake.user(1001, "Alice"), "/start")
    assert "/submit key=value" in tg.fake.sent[-1].text
    await tg.say(tg.fake.user(1004, "Li", language_code="zh-hans"), "/help")
    assert translate("cmd.ask.summary", "zh").split(":")[0] in tg.fake.sent[-1].text


async def test_inline_query_returns_one_article(tg: Harness):
    alice = tg.fake.user(1001, "Alice")
    await tg.feed(tg.fake.build.inline(alice, QUESTION))
    [answer] = tg.fake.of("answerInlineQuery")
    [article] = answer.params["results"]
    assert article["type"] == "article" and article["input_message_content"]["parse_mode"] == "HTML"
    assert "<pre>" in article["input_message_content"]["message_text"]
    assert answer.params["cache_time"] <= 60
    await tg.feed(tg.fake.build.inline(alice, "  "))
    empty = tg.fake.of("answerInlineQuery")[-1]
    assert empty.params["results"] == [] and empty.params["button"]["start_parameter"] == "inline"


async def test_chart_button_sends_a_photo(tg: Harness):
    alice = tg.fake.user(1001, "Alice")
    await tg.say(alice, QUESTION)
    chart = next(b for b in tg.fake.sent[0].buttons if b["callback_data"].startswith("v:c:"))
    await tg.press(alice, tg.fake.sent[0].message, chart["callback_data"])
    [photo] = tg.fake.of("sendPhoto")
    assert photo.files["photo"][1].startswith(b"\x89PNG")


async def test_export_sends_a_document(tg: Harness):
    await tg.say(tg.fake.user(MODERATOR, "Bob"), "/export json")
    [doc] = tg.fake.of("sendDocument")
    name, data = doc.files["document"]
    assert name.endswith(".json") and len(data) > 1000 and "JSON" in doc.text


async def test_markup_refused_is_resent_as_plain_text(tg: Harness):
    tg.fake.fail("sendMessage", 400, description="Bad Request: can't parse entities: unsupported tag")
    await tg.say(tg.fake.user(1001, "Alice"), QUESTION)
    [plain] = tg.fake.sent
    assert "parse_mode" not in plain.params and "<pre>" not in plain.text and "Q4_K_M" in plain.text


def test_actor_names():
    from telegram import User

    assert actor_of(User(5, "Ann", False, last_name="Lee")).name == "Ann Lee"
    assert actor_of(User(5, "", False, username="ann")).name == "@ann"
    assert actor_of(User(5, "Ann", False)).key == "telegram:5"


async def test_review_in_a_group_goes_to_the_moderators_private_chat(tg: Harness):
    alice, bob, group = tg.fake.user(1001, "Alice"), tg.fake.user(MODERATOR, "Bob"), tg.fake.group()
    await tg.say(alice, SUBMISSION)
    sid = submission_id(tg.fake.sent[-1].text)
    before = len(tg.fake.sent)
    await tg.say(bob, f"/review@{BOT_USERNAME}", group)
    new = tg.fake.sent[before:]
    cards = [c for c in new if any(b.get("callback_data") == f"m:a:{sid}" for b in c.buttons)]
    assert cards and all(c.chat_id == MODERATOR for c in cards), "the cards are in Bob's private chat"
    in_group = [c for c in new if c.chat_id == group["id"]]
    assert [c.text for c in in_group] == ["Sent to you in a private chat."]


async def test_review_stays_in_the_group_when_the_moderator_never_opened_a_private_chat(tg: Harness):
    alice, bob, group = tg.fake.user(1001, "Alice"), tg.fake.user(MODERATOR, "Bob"), tg.fake.group()
    await tg.say(alice, SUBMISSION)
    sid = submission_id(tg.fake.sent[-1].text)
    tg.fake.fail("sendMessage", 403, times=10, chat_id=MODERATOR)
    before = len(tg.fake.sent)
    await tg.say(bob, f"/review@{BOT_USERNAME}", group)
    new = tg.fake.sent[before:]
    assert any(
        c.chat_id == group["id"] and any(b.get("callback_data") == f"m:a:{sid}" for b in c.buttons)
        for c in new
    )
    assert not any(c.text == "Sent to you in a private chat." for c in new)


async def test_review_in_a_group_is_in_the_default_language_in_both_chats(tmp_path):
    """TOKBOT_DEFAULT_LANG=zh and a moderator whose app gives no language: the cards in the private
    chat and the pointer left in the group are both in the language the router decided."""
    from bot.app import build_app
    from core.storage.memory import MemoryStorage
    from tests.bot.telegram.conftest import settings

    app = build_app(settings(tmp_path, default_lang="zh"), storage=MemoryStorage())
    await app.start()
    tg = Harness(app)
    await tg.adapter.start()
    try:
        alice = tg.fake.user(1001, "Alice", language_code="")
        bob, group = tg.fake.user(MODERATOR, "Bob", language_code=""), tg.fake.group()
        await tg.say(alice, SUBMISSION)
        before = len(tg.fake.sent)
        await tg.say(bob, f"/review@{BOT_USERNAME}", group)
        new = tg.fake.sent[before:]
        private = [c.text for c in new if c.chat_id == MODERATOR]
        in_group = [c.text for c in new if c.chat_id == group["id"]]
        assert private and private[0].startswith(translate("review.header", "zh", shown=1, total=1)[:4])
        assert in_group == [translate("telegram.sent_privately", "zh")]
    finally:
        await tg.adapter.stop()
        await app.close()


async def test_typed_intents_on_telegram(tg: Harness):
    """ASKER_PRIVATELY moves to the private chat (above); expects_reply asks for a reply in a group
    only; private_chat_topic is a deep-link button; a Prompt is answered by the person's next line."""
    from bot.telegram.replies import Destination
    from core.commands.types import Audience, Prompt, Response

    replier = tg.adapter.replier
    group = Destination(-100123, False, "1001", "en", reply_to=None)
    private = Destination(1001, True, "1001", "en")
    await replier.send(group, [Response("which card?", expects_reply=True)])
    assert tg.fake.sent[-1].params["reply_markup"]["force_reply"] is True
    await replier.send(private, [Response("which card?", expects_reply=True)])
    assert "reply_markup" not in tg.fake.sent[-1].params, "in a private chat the next line answers"
    await replier.send(
        group, [Response("private only", audience=Audience.ASKER, private_chat_topic="subscribe")]
    )
    [link] = [b for b in tg.fake.sent[-1].buttons if "url" in b]
    assert link["url"].endswith("?start=subscribe")
    assert tg.fake.sent[-1].chat_id == -100123, "ASKER (no ephemeral on Telegram): stays in the chat"
    await replier.send(
        private, [Response("why?", audience=Audience.ASKER, prompt=Prompt("why?", "reject 1"))]
    )
    assert tg.fake.sent[-1].params["reply_markup"]["force_reply"] is True
