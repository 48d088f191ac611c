"""Topic Explorer: research-paper abstracts in, an interactive topic dashboard out.

Two worlds (docs/architecture.md): `explorer.build` (read, embed, fit, project, summarise)
may import the heavy modelling stack lazily; `explorer.view` (store, charts, search, text,
ui) never does, so a hosted dashboard runs without torch. They meet at `explorer.artifacts`.
"""

__version__ = "0.1.0"
