"""The ask pipeline: a chat question read into a query (core/understanding/query.py), the reply
decided for its intent (`answer`, `intent_answer`), and the `estimate` command's typed request
(`estimate_request`)."""
