"""Sitemaps: finding, reading and checking them (the sitemaps.org protocol)."""
