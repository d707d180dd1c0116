"""The ``nitpicker`` command line: a click shell whose subcommands all come from plugins."""
