"""Write ``digits.npz``: scikit-learn's bundled 8x8 hand-written digits with a fixed split.

Provenance: the UCI ML hand-written digits data set (E. Alpaydin and C. Kaynak,
Bogazici University, 1998), as shipped inside scikit-learn (BSD-3-Clause) by
``sklearn.datasets.load_digits``: 1797 grey images of 8x8 pixels, values 0..16.

scikit-learn is needed only to run this script once; the output is committed, so
mlcbench never depends on it. Run from the repository root::

    python datasets/make_digits.py
"""
import pathlib

import numpy as np

SEED = 0
NUM_TEST = 360
OUT = pathlib.Path(__file__).resolve().parent / "digits.npz"


def split(images: np.ndarray, labels: np.ndarray, seed: int = SEED, num_test: int = NUM_TEST):
    """A seeded shuffle, then the last ``num_test`` images are the test set."""
    order = np.random.default_rng(seed).permutation(len(labels))
    train, test = order[:-num_test], order[-num_test:]
    return images[train], labels[train], images[test], labels[test]


def main() -> None:
    from sklearn.datasets import load_digits
    digits = load_digits()
    # Pixel values are integers 0..16: uint8 keeps the file small and exact.
    images = digits.images.astype(np.uint8).reshape(-1, 1, 8, 8)
    assert np.array_equal(images.reshape(-1, 64), digits.data), "pixels are not integers"
    labels = digits.target.astype(np.int64)
    x_train, y_train, x_test, y_test = split(images, labels)
    np.savez_compressed(OUT, x_train=x_train, y_train=y_train, x_test=x_test, y_test=y_test)
    print(f"wrote {OUT.name}: train {x_train.shape}, test {x_test.shape}, "
          f"{OUT.stat().st_size} bytes")


if __name__ == "__main__":
    main()
