"""What may name a corpus or a run folder under the cache: the one definition, stdlib only,
so the serving supervisor (explorer/serve.py) can check for a corpus without loading pandas."""

from __future__ import annotations

import re

# The pointer file naming a corpus's latest complete run.
LATEST = "latest"
# Folders under the cache that are not corpora.
RESERVED_NAMES = frozenset({"embeddings", "models", "numba", "reductions", LATEST})
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
