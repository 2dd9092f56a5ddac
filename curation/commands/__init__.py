"""The ``curate`` commands, one module each (inspect_ai's ``_cli/``).

Each command module has a ``register(sub)`` that adds its parser to ``curate``'s
subcommands and points it at a small ``run`` function; the function imports the library
it calls (so building the parser stays cheap) and keeps no domain logic of its own.
:mod:`curation.cli` builds the top parser from them; :mod:`curation.commands.help` holds
every page's description and example. No other package parses arguments.
"""
