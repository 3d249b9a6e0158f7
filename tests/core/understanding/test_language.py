from core.catalog.loader import default_catalog
from core.understanding.language import decide_language, english_words


def test_chinese_text_decides_then_the_hint_then_the_default():
    assert decide_language("V100 32G 27B 多少 token", "en", "en") == "zh"
    assert decide_language("V100 32G 27B", "zh", "en") == "zh"
    assert decide_language("V100 32G 27B", None, "zh") == "zh"
    assert decide_language("V100 32G 27B", "fr", "en") == "en"
    assert decide_language("", None, "en") == "en"


def test_a_question_in_english_words_is_answered_in_english():
    words = english_words(default_catalog())
    assert decide_language("V100 32G 27B 多少 token", "en", "en", words) == "zh"
    assert decide_language("can my 4070 super run gemma 3 27b?", "zh", "zh", words) == "en"
    assert decide_language("V100 32G 27B", "zh", "zh", words) == "zh"  # names and numbers don't tell
    assert decide_language("3090 qwen3 32b q4", "en", "en", words) == "en"
    assert decide_language("3090 qwen3 32b q4", "fr", "en", words) == "en"
    # Commands pass no words: their arguments are typed the same in both languages.
    assert decide_language("withdraw 1 measured with another build", "zh", "en") == "zh"
