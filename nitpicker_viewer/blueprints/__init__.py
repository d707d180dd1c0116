"""Built-in viewer pages, each registered through ``register_viewer_blueprints`` like a third party's."""
