"""Attack tests: loopback only, bounded in count and time (README "Hosting").

Each test plays a visitor or an attacker against a real server or a real artifact, and
asserts what the attack could not do. The browser fixtures (`browser`, `page`) are
tests/conftest.py's, shared with the end-to-end suite.
"""
