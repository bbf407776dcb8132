"""``keras.wrappers`` (TF 2.21's tf.keras has it): Keras 3's scikit-learn estimators around a model.
scikit-learn is not a dependency of tapeflow: the names exist and raise UnsupportedFeatureError when
used."""
from __future__ import annotations

from .._unsupported import unsupported_class

_WHAT = ("Keras' scikit-learn wrappers (scikit-learn is not a dependency of tapeflow); call model.fit / "
         "model.predict directly")
SKLearnClassifier = unsupported_class("keras.wrappers.SKLearnClassifier", _WHAT)
SKLearnRegressor = unsupported_class("keras.wrappers.SKLearnRegressor", _WHAT)
SKLearnTransformer = unsupported_class("keras.wrappers.SKLearnTransformer", _WHAT)
__all__ = ["SKLearnClassifier", "SKLearnRegressor", "SKLearnTransformer"]
