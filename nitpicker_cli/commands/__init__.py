"""Built-in subcommands; each module is a plugin implementing ``register_commands``."""
