"""Widgets shared by several pages, one module per kind: `pickers` (URL-bound pickers and
the warning for a link's unknown values), `filters` (the sidebar's filters), `tables` (paper
tables, their CSV and the links in them), `share` (the link to this view, a chart as HTML).
Filter widgets are bound to the URL, so the address bar always reproduces the view."""
