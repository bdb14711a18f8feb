# Runs a codeact-style program (stdin) with pydantic-monty 1.4.0's current API: a pool of
# `monty` worker processes, one checked-out session, `feed_run(…, external_lookup=…)`, with
# `glob` and `view` written in Python on the host. Usage: python pydantic_monty_1_4_0.py [WORKSPACE]
"""pydantic-monty 1.4.0 host for the TODO-scan benchmark."""

import sys

from pydantic_monty import Monty

from _tools import TOOLS, write

code = sys.stdin.read()
# Like codeact's --max-tool-calls for the scan: the default budget of 1 000 host round trips
# per checkout is far below 10 000 view() calls.
with Monty() as pool, pool.checkout(limits={"max_suspensions": 1_000_000}) as session:
    session.feed_run(code, external_lookup=TOOLS, print_callback=write)
