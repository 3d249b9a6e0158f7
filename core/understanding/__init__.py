"""Understanding chat questions: fuzzy resolution of card/model names and question parsing."""
