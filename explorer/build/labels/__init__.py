"""Phrase labels for the nodes of a topic hierarchy (areas > topics > subtopics), one step
per module, each behind one function (docs/labels.md says what a label must be):

- `phrases.py`: the candidates, runs of 1-5 words a reader can find in the abstracts, with
  no stop word at either end (`phrase_table`);
- `ranking.py`: each node's candidates scored against its siblings (c-TF-IDF), weighted by
  their specificity against the venue background and, for a parent, by how evenly its
  children use them (`rank`);
- `candidates.py`: the whole term a ranked phrase stands for in its node (`NodeTerms`);
- `selection.py`: one node's label, its best phrases taken first (`select`);
- `distinct.py`: siblings never share a short label, and a parent does not repeat a child's
  unless that child holds most of its papers (`distinct`);
- `nodes.py`: the steps in order for every node (`label_nodes`), above LABEL_SAMPLE
  documents on a sample;
- `terms.py`: when two phrases are one term (inflection, nesting, abbreviation);
- `audit.py`: an independent check of finished labels against the documented rules.
"""
