"""Values to NumPy, images to PNG: what the summaries need from their inputs."""
from __future__ import annotations

import struct
import zlib
from numbers import Number

import numpy as np

from ...tensor import Tensor


def to_numpy(value) -> np.ndarray:
    """An ember Tensor (any device), NumPy array or Python number as a host NumPy array."""
    if isinstance(value, Tensor):
        return value.detach().cpu().numpy()
    if isinstance(value, np.ndarray):
        return value
    if isinstance(value, (Number, np.generic)) and not isinstance(value, (str, bytes)):
        return np.asarray(value)
    if isinstance(value, (list, tuple)):
        return np.asarray(value)
    raise NotImplementedError(
        f"Got {type(value).__name__}, but an ember Tensor, a NumPy array or a number is "
        "expected.")


def as_step(global_step):
    """``global_step`` as an int (it may be a 0-d tensor or a NumPy integer), or None."""
    if global_step is None:
        return None
    return int(to_numpy(global_step).reshape(()))


def check_tag(tag, what: str = "tag") -> str:
    if not isinstance(tag, str):
        raise TypeError(f"{what} must be a str, but got {type(tag).__name__}")
    return tag


# ----------------------------------------------------------------------------- images
_LAYOUTS = {4: "NCHW", 3: "HWC", 2: "HW"}


def to_hwc(array: np.ndarray, dataformats: str) -> np.ndarray:
    """An image (CHW, HWC, HW, ... in any letter order) or a batch (NCHW, NHWC) as one HWC
    array with 1, 3 or 4 channels; a batch becomes a grid of up to 8 columns."""
    if not isinstance(dataformats, str):
        raise TypeError(f"dataformats must be a str such as 'CHW', got {dataformats!r}")
    letters = dataformats.upper()
    if len(set(letters)) != len(letters):
        raise AssertionError(
            f"You can not use the same dimension shorthand twice. input_format: {dataformats}")
    if array.ndim != len(letters):
        raise AssertionError(
            f"size of input tensor and input format are different. tensor shape: "
            f"{tuple(array.shape)}, input_format: {dataformats}")
    target = _LAYOUTS.get(len(letters))
    if target is None or set(letters) != set(target):
        raise ValueError(
            f"dataformats {dataformats!r} does not describe an image: use a permutation of "
            "NCHW for a batch, CHW for one image or HW for a grayscale image")
    if len(letters) == 4:
        return _grid(array.transpose([letters.index(c) for c in "NCHW"]))
    if len(letters) == 3:
        return array.transpose([letters.index(c) for c in "HWC"])
    return array.transpose([letters.index(c) for c in "HW"])[:, :, None]


def _grid(batch: np.ndarray, columns: int = 8) -> np.ndarray:
    """NCHW images laid out left to right, top to bottom, as one HWC image."""
    n, c, h, w = batch.shape
    if n == 0:
        raise ValueError("add_images got an empty batch (N = 0)")
    columns = min(n, columns)
    rows = -(-n // columns)
    canvas = np.zeros((rows * h, columns * w, c), dtype=batch.dtype)
    for i in range(n):
        y, x = divmod(i, columns)
        canvas[y * h:(y + 1) * h, x * w:(x + 1) * w] = batch[i].transpose(1, 2, 0)
    return canvas


def image_to_uint8(hwc: np.ndarray) -> np.ndarray:
    """PyTorch's rule: uint8 stays as it is; anything else is taken to lie in [0, 1] and is
    scaled by 255, then clipped. One channel becomes three (grayscale shown as RGB)."""
    height, width, channels = hwc.shape
    if channels not in (1, 3, 4):
        raise ValueError(
            f"an image needs 1 (grayscale), 3 (RGB) or 4 (RGBA) channels, but got {channels} "
            "(check dataformats)")
    if height == 0 or width == 0:
        raise ValueError(f"an image needs a height and a width above 0, got {height}x{width}")
    if hwc.dtype != np.uint8:
        scaled = np.nan_to_num(hwc.astype(np.float32) * 255.0, nan=0.0, posinf=255.0,
                               neginf=0.0)
        hwc = scaled.clip(0, 255).astype(np.uint8)
    if channels == 1:
        hwc = np.repeat(hwc, 3, axis=2)
    return np.ascontiguousarray(hwc)


def encode_png(hwc: np.ndarray) -> bytes:
    """An 8-bit HWC array (1, 3 or 4 channels) as PNG bytes (no filtering, zlib level 6)."""
    height, width, channels = hwc.shape
    color_type = {1: 0, 3: 2, 4: 6}[channels]
    rows = np.zeros((height, 1 + width * channels), dtype=np.uint8)  # filter byte 0 per row
    rows[:, 1:] = hwc.reshape(height, width * channels)
    header = struct.pack(">IIBBBBB", width, height, 8, color_type, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", header)
            + _chunk(b"IDAT", zlib.compress(rows.tobytes(), 6)) + _chunk(b"IEND", b""))


def _chunk(kind: bytes, data: bytes) -> bytes:
    return (struct.pack(">I", len(data)) + kind + data
            + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))
