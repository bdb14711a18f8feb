# Runs a codeact-style program (stdin) with pydantic-monty 0.0.18's in-process API — the way the
# plugin codeact replaces embedded Monty: `Monty(code).run(external_functions=…)`, with `glob`
# and `view` written in Python on the host. Usage: python pydantic_monty_0_0_18.py [WORKSPACE]
"""pydantic-monty 0.0.18 host for the TODO-scan benchmark."""

import sys

from pydantic_monty import Monty

from _tools import TOOLS, write

Monty(sys.stdin.read()).run(external_functions=TOOLS, print_callback=write)
