"""tapeflow.keras.datasets: Keras' ``load_data()`` loaders (NumPy arrays, no tapeflow types), reading
the files of Keras' cache (``~/.keras/datasets``) or the directories ``_files`` lists."""
from . import boston_housing, california_housing, cifar10, cifar100, fashion_mnist, imdb, mnist, reuters  # noqa: F401

__all__ = ["boston_housing", "california_housing", "cifar10", "cifar100", "fashion_mnist", "imdb", "mnist",
           "reuters"]
