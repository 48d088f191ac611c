"""Hosting: serving the dashboard (`explorer dashboard`, `explorer serve`, a published
folder's `serve.py`) and publishing it (`explorer publish`).

Standard library only (with `explorer.errors` and `explorer.names`), bar the `publish*`
modules, which check and copy runs: a published folder runs the serving modules without the
package's dependencies. The view imports `settings` alone, the names it shares with the server.
"""
