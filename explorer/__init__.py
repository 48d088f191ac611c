"""Topic Explorer: research-paper abstracts in, an interactive topic dashboard out.

The package is split in two worlds (see DESIGN.md): the pipeline modules
(`sources`, `embed`, `topics`, `project`, `summarise`, `pipeline`) may import the
heavy modelling stack lazily; the viewer modules (`artifacts`, `store`, `charts`,
`ui`) never do, so a hosted dashboard runs without torch.
"""

__version__ = "0.1.0"
