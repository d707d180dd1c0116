"""The viewer: a Flask shell whose pages, the core ones included, come from route plugins."""
