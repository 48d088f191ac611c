"""Serve this folder's dashboard on every core: `python serve.py [--workers N] [--port P]`.

N Streamlit workers behind haproxy (sticky sessions, websockets, health checks); Ctrl-C
stops them all. Needs only the viewer's packages and haproxy (`apt-get install haproxy`).
The code is `explorer/hosting/`, shared with `explorer serve`; this file lets a published
folder, which has no `explorer` command, run it.
"""

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # the folder's own `explorer` package, from any working folder

from explorer.hosting.serve import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main(app_dir=HERE))
