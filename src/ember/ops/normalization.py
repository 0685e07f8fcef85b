"""Normalization: batch_norm, layer_norm, group_norm, instance_norm, rms_norm, local_response_norm, normalize."""
from __future__ import annotations
