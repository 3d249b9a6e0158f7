from __future__ import annotations

from core.commands.types import ACTION_MAX_BYTES


async def test_question_gets_table_and_followup_buttons(h):
    [r] = await h.say("alice", "V100 32G 27B 多少 token")
    assert r.status == "ok" and "Q4_K_M" in r.text
    actions = [b.action for row in r.buttons for b in row]
    # A datacenter card runs Linux only (issue 20): no OS switch; a GeForce card keeps it.
    assert any(a.startswith("v:f:") for a in actions) and not any(a.startswith("v:o:") for a in actions)
    assert all(len(a.encode()) <= ACTION_MAX_BYTES for a in actions)
    [r] = await h.say("alice", "3090 27B 多少 token")
    assert any(b.action.startswith("v:o:") for row in r.buttons for b in row)


async def test_every_followup_button_answers(h):
    [r] = await h.say("alice", "/ask 4090 qwen3 32b q4_k_m 32k")
    for row in r.buttons:
        for button in row:
            out = await h.press("alice", button.action)
            assert out and out[0].status in ("ok", "error"), button
            if button.action.startswith("v:c:"):
                continue  # the chart needs matplotlib, an optional extra
            assert out[0].status == "ok" and (out[0].text or out[0].photo), button.action


async def test_os_and_kv_switch_change_the_answer(h):
    [r] = await h.say("alice", "4090 qwen3 32b 32k")
    os_button = next(b for row in r.buttons for b in row if b.action.startswith("v:o:"))
    assert os_button.action.endswith(":linux"), "a GeForce card is assumed on Windows; offer Linux"
    [linux] = await h.press("alice", os_button.action)
    assert "Windows" not in linux.text and linux.text != r.text
    kv_button = next(b for row in r.buttons for b in row if b.action.startswith("v:k:"))
    [kv] = await h.press("alice", kv_button.action)
    assert "q8_0" in kv.text and "--cache-type-k q8_0" in kv.text


async def test_stale_or_forged_followup_is_calm(h):
    [r] = await h.press("alice", "v:f:zzz")
    assert r.status == "error" and "too old" in r.text
    [r] = await h.press("alice", "nonsense")
    assert r.status == "error"


async def test_help_documents_every_command_in_both_languages(h):
    from core.commands.registry import COMMANDS

    en = "\n".join(r.text for r in await h.say("alice", "/help"))
    for name in COMMANDS:
        assert f"/{name}" in en
    assert en.count("e.g.") == len(COMMANDS)
    zh = "\n".join(r.text for r in await h.say("alice", "/help", platform="telegram", chat="1"))
    assert "/submit" in zh
    [one] = await h.say("alice", "/help submit")
    assert "/submit key=value" in one.text and "/review" not in one.text


async def test_unknown_command_and_crash_are_friendly(h, monkeypatch):
    [r] = await h.say("alice", "/bogus")
    assert r.status == "error" and "/bogus" in r.text

    async def boom(*a):
        raise RuntimeError("x")

    from dataclasses import replace

    from core.commands.registry import BY_NAME

    monkeypatch.setitem(BY_NAME, "accuracy", replace(BY_NAME["accuracy"], run=boom))
    [r] = await h.say("alice", "/accuracy")
    assert r.status == "error" and "nothing was changed" in r.text
    assert h.observed[-1][1:3] == ("accuracy", "error")


async def test_plain_hello_gets_help(h):
    [r] = await h.say("alice", "hello there")
    assert r.status == "ok" and "V100 32G 27B" in r.text and not r.buttons


async def test_in_full_button_names_the_quant_the_command_runs_when_none_was_asked(h):
    [r] = await h.say("alice", "4090 qwen3 32b")
    first = r.buttons[0][0]
    assert first.action.startswith("v:q:") and first.label.endswith("in full")
    quant = first.label.split()[0]
    assert f"-{quant}.gguf" in r.text, "the same quant as the launch command"
    [detail] = await h.press("alice", first.action)
    assert quant in detail.text.splitlines()[0]


async def test_followup_keys_are_unguessable_and_bound_to_who_got_the_answer(h):
    [r] = await h.say("alice", "4090 qwen3 32b")
    frameworks = next(b.action for row in r.buttons for b in row if b.action.startswith("v:f:"))
    key = frameworks.split(":")[2]
    assert len(key) >= 8 and not key.isdigit() and not all(c in "0123456789abcdef" for c in key)
    [again] = await h.say("alice", "4090 qwen3 32b")
    assert key not in {b.action.split(":")[2] for row in again.buttons for b in row}, "a fresh key per answer"
    # Someone else pressing alice's button, or alice elsewhere, or a guessed counter: expired.
    for user, chat, action in (("mallory", None, frameworks), ("alice", "other-chat", frameworks)):
        [forged] = await h.press(user, action, chat=chat)
        assert forged.status == "error" and "too old" in forged.text and forged.private
    for guess in ("1", "2", "a", "10"):
        [forged] = await h.press("mallory", f"v:f:{guess}")
        assert forged.status == "error" and "too old" in forged.text
    [mine] = await h.press("alice", frameworks)
    assert mine.status == "ok" and "llama" in mine.text.lower()


async def test_a_prompt_is_answered_by_the_next_line_and_dropped_by_a_command(h):
    [r] = await h.say("alice", SUBMIT_LINE)
    sid = r.text.split("Received as #")[1].split(":")[0]
    [ask] = await h.say("bob", f"/reject {sid}")
    assert ask.prompt is not None and ask.prompt.command == f"reject {sid}"
    [help_first, *_] = await h.say("bob", "/help")  # a command instead of an answer drops the question
    assert "/submit" in help_first.text
    [answer] = await h.say("bob", "no log")
    assert "Rejected" not in answer.text, "no question pending any more: an ordinary line"
    await h.say("bob", f"/reject {sid}")
    [other] = await h.say("alice", "not my question", chat="bob")  # someone else in that chat
    assert "Rejected" not in other.text
    [done] = await h.say("bob", "no log")
    assert f"Rejected #{sid}" in done.text
    assert (await h.storage.get_submission(int(sid))).reason == "no log"


async def test_the_language_is_decided_once_for_every_command(h):
    h.bot.default_lang = "zh"
    for line in ("/subscriptions", "/review", "/accuracy", "/bogus", "/export xml", "/cancel"):
        responses = await h.say("alice", line)
        assert responses and all(any("\u4e00" <= ch <= "\u9fff" for ch in r.text) for r in responses), line
    [zh] = await h.say("alice", "/subscriptions", platform="discord")
    assert "还没有" in zh.text, "no hint: the bot's default"


SUBMIT_LINE = '/submit gpu="V100 32G" model="gemma 3 27b" quant=Q4_K_M ctx=8k decode=21.5'


async def test_how_many_cards_buttons_open_the_setup_the_conclusion_names(h):
    # The table says "Q8_0 needs N cards": its "in full" is that quant on N cards, not one card that
    # can't hold the model (the button used to name a quant the table doesn't show).
    [r] = await h.say("alice", "部署 deepseek v3 需要几张 A100 80G")
    first = r.buttons[0][0]
    conclusion = r.text.splitlines()[-1]
    quant = first.label.split()[0]
    assert first.action.startswith("v:q:") and quant in conclusion, (first.label, conclusion)
    [detail] = await h.press("alice", first.action)
    count = next(int(w) for w in conclusion.replace("需要", " ").split() if w.isdigit())
    assert f"{count}×" in detail.text.splitlines()[0] and quant in detail.text.splitlines()[0]


async def test_how_many_cards_in_english_keeps_the_conclusions_quant_in_every_view(h):
    [r] = await h.say("alice", "how many H100 do I need for qwen3 235b at q4")
    first = r.buttons[0][0]
    assert first.label.split()[0] == "Q4_K_M", first.label
    [frameworks] = await h.press(
        "alice", next(b.action for row in r.buttons for b in row if b.action.startswith("v:f:"))
    )
    assert frameworks.status == "ok"
