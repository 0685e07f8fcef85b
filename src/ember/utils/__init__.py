"""``ember.utils``: data loading and other utilities."""
