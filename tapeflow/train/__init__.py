"""``tapeflow.train``: checkpoints (TF's ``tf.train`` names).

* ``Checkpoint(**objects)``: ``save(prefix)`` -> ``prefix-N``, ``write(path)``,
  ``restore(path)`` / ``read(path)`` -> status with ``assert_consumed()``,
  ``assert_existing_objects_matched()``, ``expect_partial()``; deferred
  restoration into variables created later;
* ``CheckpointManager(ckpt, directory, max_to_keep=5, keep_checkpoint_every_n_hours=None,
  checkpoint_name='ckpt', best_k=None, mode='max')`` and ``latest_checkpoint(directory)``;
* ``save_weights(model, path)`` / ``load_weights(model, path)`` (also attached
  as ``Layer.save_weights`` / ``Layer.load_weights`` when ``tapeflow.keras``
  is present).

Storage: safetensors tensors + a JSON index per checkpoint, written
atomically (see ``storage``). Errors are ``CheckpointError`` subclasses that
name the file and the variable.
"""
from .checkpoint import Checkpoint, CheckpointLoadStatus, InitializationOnlyStatus, save_weights, load_weights
from .manager import CheckpointManager, latest_checkpoint, get_checkpoint_state
from .storage import (CheckpointError, CheckpointNotFoundError, CorruptCheckpointError,  # noqa: F401
                      CheckpointMismatchError)
from .trackable import collect as list_checkpoint_keys  # noqa: F401

__all__ = ["Checkpoint", "CheckpointLoadStatus", "CheckpointManager", "latest_checkpoint", "get_checkpoint_state",
           "save_weights", "load_weights", "CheckpointError", "CheckpointNotFoundError", "CorruptCheckpointError",
           "CheckpointMismatchError", "list_variables", "load_checkpoint"]


def list_variables(ckpt_dir_or_file):
    """``[(key, shape)]`` of a checkpoint (a prefix, or a directory: its latest)."""
    import os
    from . import storage
    p = os.fspath(ckpt_dir_or_file)
    if os.path.isdir(p):
        p = latest_checkpoint(p) or p
    meta = storage.read_index(storage.normalize_prefix(p))
    return sorted((k, list(e["shape"])) for k, e in meta["tensors"].items())


def load_checkpoint(ckpt_dir_or_file):
    """``{key: ndarray}`` of a checkpoint (verified), for inspection."""
    import os
    from . import storage
    p = os.fspath(ckpt_dir_or_file)
    if os.path.isdir(p):
        p = latest_checkpoint(p) or p
    return storage.read_checkpoint(p)[0]


def _attach_to_keras():
    """``model.save_weights(path)`` / ``model.load_weights(path)`` on Keras layers
    (methods defined here; the Keras package's files are not edited)."""
    import sys
    eng = sys.modules.get("tapeflow.keras.engine")
    if eng is None:
        try:
            from ..keras import engine as eng  # noqa: F811
        except Exception:
            return False
    Layer = getattr(eng, "Layer", None)
    if Layer is None:
        return False
    if "save_weights" not in Layer.__dict__:
        def _save(self, filepath, overwrite=True, save_format=None, options=None):
            return save_weights(self, filepath, overwrite=overwrite, save_format=save_format, options=options)
        _save.__doc__ = save_weights.__doc__
        Layer.save_weights = _save
    if "load_weights" not in Layer.__dict__:
        def _load(self, filepath, skip_mismatch=False, by_name=False, options=None):
            return load_weights(self, filepath, skip_mismatch=skip_mismatch, by_name=by_name, options=options)
        _load.__doc__ = load_weights.__doc__
        Layer.load_weights = _load
    return True


_attach_to_keras()
