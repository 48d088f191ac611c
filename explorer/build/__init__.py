"""The heavy world: read inputs, embed, fit topics, project, summarise, write a run.

Modules here may import torch, sentence-transformers, bertopic, umap and hdbscan (lazily,
inside the function that needs them). Nothing under `explorer.view` imports this package,
except the query encoder in `explorer.view.query_encoder` (see there).
"""
