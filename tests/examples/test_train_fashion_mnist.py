"""examples/train_fashion_mnist.py: IDX parsing, the missing-data error, and a one-epoch
smoke run on a few hundred images (skipped when the dataset package is not installed)."""
from __future__ import annotations

import gzip
import os

import numpy as np
import pytest
import train_fashion_mnist as fashion

HAVE_DATA = all(os.path.isfile(os.path.join(fashion.PACKAGE_DIR, name + ".gz"))
                for name in fashion.FILES.values())


def _write_idx(path, array: np.ndarray, compress: bool) -> None:
    header = bytes([0, 0, 0x08, array.ndim]) + np.array(array.shape, dtype=">u4").tobytes()
    data = header + array.astype(np.uint8).tobytes()
    with (gzip.open if compress else open)(path, "wb") as f:
        f.write(data)


@pytest.mark.parametrize("compress", [True, False])
def test_read_idx_round_trip(tmp_path, compress):
    array = np.arange(2 * 3 * 4, dtype=np.uint8).reshape(2, 3, 4)
    path = str(tmp_path / ("x.idx" + (".gz" if compress else "")))
    _write_idx(path, array, compress)
    np.testing.assert_array_equal(fashion.read_idx(path), array)


def test_read_idx_rejects_bad_files(tmp_path):
    path = tmp_path / "bad"
    path.write_bytes(b"\x00\x00\x0d\x01\x00\x00\x00\x02ab")   # float elements
    with pytest.raises(ValueError, match="not an IDX file"):
        fashion.read_idx(str(path))
    path.write_bytes(b"\x00\x00\x08\x01\x00\x00\x00\x05ab")   # 5 promised, 2 present
    with pytest.raises(ValueError, match="header says"):
        fashion.read_idx(str(path))


def test_missing_data_names_both_places(tmp_path):
    with pytest.raises(SystemExit) as error:
        fashion.find_files(str(tmp_path))
    message = str(error.value)
    assert str(tmp_path) in message
    assert fashion.PACKAGE_DIR in message and "dataset-fashion-mnist" in message


def test_data_option_reads_a_directory(tmp_path):
    rng = np.random.default_rng(0)
    for key, name in fashion.FILES.items():
        n = 6 if key.startswith("train") else 4
        array = rng.integers(0, 256, (n, 28, 28)) if key.endswith("images") else \
            rng.integers(0, 10, (n,))
        _write_idx(str(tmp_path / (name + ".gz")), array, True)
    train_x, train_y, test_x, test_y = fashion.load_fashion_mnist(str(tmp_path))
    assert train_x.shape == (6, 1, 28, 28) and train_x.dtype == np.float32
    assert test_x.shape == (4, 1, 28, 28) and test_y.dtype == np.int64
    assert 0.0 <= train_x.min() and train_x.max() <= 1.0


@pytest.mark.skipif(not HAVE_DATA, reason="dataset-fashion-mnist is not installed "
                    f"(no IDX files in {fashion.PACKAGE_DIR})")
def test_one_epoch_smoke(tmp_path):
    result = fashion.run(device="cpu", epochs=1, limit=512, test_limit=500,
                         plot=str(tmp_path / "fashion.png"))
    assert np.isfinite(result["loss"]) and result["loss"] < np.log(10)
    assert result["accuracy"] > 0.4   # chance is 10%


def test_bad_limit_is_refused():
    with pytest.raises(SystemExit, match="--limit must be at least 1"):
        fashion.run(limit=0)
