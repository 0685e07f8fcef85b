"""``ember.utils.data``: datasets, samplers and the DataLoader."""
