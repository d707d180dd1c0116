"""The crawler: queue, scope, robots.txt, preflight fetching and error classification."""
