"""Suite-wide settings.

The warm cache (core/cache/warm.py) is off for the tests and every process they start: a
test that monkeypatches a builder must never write what it built to the disk for the next process.
tests/core/catalog/test_warm_cache.py turns it on in a folder of its own.
"""

import os

os.environ["TOKBOT_CACHE_DIR"] = "off"
