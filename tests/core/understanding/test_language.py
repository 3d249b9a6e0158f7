from core.catalog.loader import default_catalog
from core.understanding.language import question_language


def test_language_of_a_question():
    c = default_catalog()
    assert question_language("V100 32G 27B 多少 token", c, "en") == "zh"
    assert question_language("can my 4070 super run gemma 3 27b?", c, "zh") == "en"
    assert question_language("V100 32G 27B", c, "zh") == "zh"
    assert question_language("3090 qwen3 32b q4", c, "en") == "en"
    assert question_language("3090 qwen3 32b q4", c, "fr") == "en"
