"""Attack tests: loopback only, bounded in count and time (README "Hosting").

Each test plays a visitor or an attacker against a real server or a real artifact, and
asserts what the attack could not do. The browser fixtures are the end-to-end suite's.
"""

from tests.e2e.conftest import browser, page  # noqa: F401  (fixtures re-exported)
