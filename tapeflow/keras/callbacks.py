"""``tapeflow.keras.callbacks``: Keras' training hooks (Callback, History,
LambdaCallback, EarlyStopping, ModelCheckpoint, TensorBoard, LearningRateScheduler,
ReduceLROnPlateau, CSVLogger, TerminateOnNaN, BackupAndRestore; wave 21: ProgbarLogger,
RemoteMonitor) with Keras 3 semantics."""
import collections
import csv
import os
import warnings

import numpy as np

from .._unsupported import module_getattr as _module_getattr
# out-of-scope names (tapeflow/_unsupported.py NAMES) name their feature; any other missing name is an AttributeError
__getattr__ = _module_getattr("keras.callbacks", "tapeflow.keras.callbacks")


class Callback:
    """Base class: override any ``on_{train,epoch,batch}_{begin,end}``.
    ``self.model`` is the model being fitted; set ``model.stop_training = True``
    to end training after the current epoch."""

    def __init__(self):
        self.model = None
        self.params = {}

    def set_model(self, model):
        self.model = model

    def set_params(self, params):
        self.params = params

    def on_train_begin(self, logs=None): pass
    def on_train_end(self, logs=None): pass
    def on_epoch_begin(self, epoch, logs=None): pass
    def on_epoch_end(self, epoch, logs=None): pass
    def on_batch_begin(self, batch, logs=None): pass
    def on_batch_end(self, batch, logs=None): pass
    def on_test_begin(self, logs=None): pass
    def on_test_end(self, logs=None): pass
    def on_test_batch_begin(self, batch, logs=None): pass
    def on_test_batch_end(self, batch, logs=None): pass
    def on_predict_begin(self, logs=None): pass
    def on_predict_end(self, logs=None): pass
    def on_predict_batch_begin(self, batch, logs=None): pass
    def on_predict_batch_end(self, batch, logs=None): pass

    # Keras: the training batch hooks default to on_batch_begin/on_batch_end (its older
    # names), so a callback that overrides only those runs during fit
    def on_train_batch_begin(self, batch, logs=None):
        self.on_batch_begin(batch, logs=logs)

    def on_train_batch_end(self, batch, logs=None):
        self.on_batch_end(batch, logs=logs)


class CallbackList:
    """Dispatches each hook to every callback, in order."""

    def __init__(self, callbacks, model, params):
        self.callbacks = list(callbacks or [])
        for c in self.callbacks:
            if not isinstance(c, Callback):
                raise TypeError(f"fit(callbacks=...): expected keras.callbacks.Callback instances, "
                                f"got {type(c).__name__}")
            c.set_model(model)
            c.set_params(params)

    def __getattr__(self, hook):
        if not hook.startswith("on_"):
            raise AttributeError(hook)

        def call(*args):
            for c in self.callbacks:
                getattr(c, hook)(*args)
        return call


class History(Callback):
    """Records each epoch's logs: ``history.history['loss']`` is a per-epoch list."""

    def __init__(self):
        super().__init__()
        self.history = {}
        self.epoch = []

    def on_train_begin(self, logs=None):
        self.epoch = []

    def on_epoch_end(self, epoch, logs=None):
        self.epoch.append(epoch)
        for k, v in (logs or {}).items():
            self.history.setdefault(k, []).append(v)


class LambdaCallback(Callback):
    """Callback from plain functions, e.g. ``LambdaCallback(on_epoch_end=lambda epoch, logs: ...)``."""

    def __init__(self, on_epoch_begin=None, on_epoch_end=None, on_train_begin=None, on_train_end=None,
                 on_train_batch_begin=None, on_train_batch_end=None, **kwargs):
        super().__init__()
        given = dict(on_epoch_begin=on_epoch_begin, on_epoch_end=on_epoch_end, on_train_begin=on_train_begin,
                     on_train_end=on_train_end, on_train_batch_begin=on_train_batch_begin,
                     on_train_batch_end=on_train_batch_end, **kwargs)
        for name, fn in given.items():
            if fn is not None:
                setattr(self, name, fn)


class MonitorCallback(Callback):
    """What EarlyStopping and ModelCheckpoint share (Keras 3's MonitorCallback):
    which way ``monitor`` improves, and by how much it must."""

    def __init__(self, monitor="val_loss", mode="auto", baseline=None, min_delta=0):
        super().__init__()
        if mode not in ("auto", "min", "max"):
            warnings.warn(f"{type(self).__name__} mode '{mode}' is unknown, fallback to auto mode.", stacklevel=3)
            mode = "auto"
        self.monitor = monitor
        self.mode = mode
        self.best = baseline
        self.min_delta = abs(min_delta)
        self.monitor_op = None

    def _set_monitor_op(self):
        """``np.less`` or ``np.greater``; in auto mode from the name (losses go down) or the
        compiled metric of that name (its ``_direction``), else an error as Keras gives."""
        if self.mode == "min":
            self.monitor_op = np.less
        elif self.mode == "max":
            self.monitor_op = np.greater
        else:
            name = self.monitor[4:] if self.monitor.startswith("val_") else self.monitor
            if name == "loss":
                self.monitor_op = np.less
            model_metrics = self.model._flat_metrics() if hasattr(self.model, "_flat_metrics") else \
                getattr(self.model, "metrics", None) or ()
            for m in model_metrics:
                direction = getattr(m, "_direction", None)
                if m.name == name and direction is not None:
                    self.monitor_op = np.greater if direction == "up" else np.less
            if self.monitor_op is None:
                raise ValueError(f"{type(self).__name__} callback received monitor={self.monitor}, but Keras "
                                 "isn't able to automatically determine whether that metric should be maximized "
                                 "or minimized. Pass `mode='max'` in order to monitor based on the highest metric "
                                 "value, or pass `mode='min'` in order to use the lowest value.")
        if self.monitor_op is np.less:
            self.min_delta = -abs(self.min_delta)

    def _is_improvement(self, current, reference):
        if reference is None:
            return True
        return bool(self.monitor_op(current - self.min_delta, reference))


class EarlyStopping(MonitorCallback):
    """Stop when ``monitor`` has not improved by more than ``min_delta`` for
    ``patience`` epochs (Keras 3 rules: the wait counter counts from the best
    epoch, never stops at epoch 0, ``restore_best_weights`` applies at train end)."""

    def __init__(self, monitor="val_loss", min_delta=0, patience=0, verbose=0, mode="auto", baseline=None,
                 restore_best_weights=False, start_from_epoch=0):
        super().__init__(monitor, mode, min_delta=min_delta)
        self.patience = patience
        self.verbose = verbose
        self.baseline = baseline
        self.restore_best_weights = restore_best_weights
        self.start_from_epoch = start_from_epoch
        self.wait = 0
        self.stopped_epoch = 0
        self.best_weights = None
        self.best_epoch = 0

    def on_train_begin(self, logs=None):
        self.wait = 0
        self.stopped_epoch = 0
        self.best = None
        self.best_weights = None
        self.best_epoch = 0

    def on_epoch_end(self, epoch, logs=None):
        if self.monitor_op is None:
            self._set_monitor_op()
        current = (logs or {}).get(self.monitor)
        if current is None or epoch < self.start_from_epoch:
            if current is None:
                warnings.warn(f"Early stopping conditioned on metric `{self.monitor}` which is not available. "
                              f"Available metrics are: {','.join(logs or {})}", stacklevel=2)
            return
        if self.restore_best_weights and self.best_weights is None:
            self.best_weights = self.model.get_weights()
            self.best_epoch = epoch
        self.wait += 1
        if self._is_improvement(current, self.best):
            self.best = current
            self.best_epoch = epoch
            if self.restore_best_weights:
                self.best_weights = self.model.get_weights()
            if self.baseline is None or self._is_improvement(current, self.baseline):
                self.wait = 0
            return
        if self.wait >= self.patience and epoch > 0:
            self.stopped_epoch = epoch
            self.model.stop_training = True

    def on_train_end(self, logs=None):
        if self.stopped_epoch > 0 and self.verbose > 0:
            print(f"Epoch {self.stopped_epoch + 1}: early stopping")
        if self.restore_best_weights and self.best_weights is not None:
            if self.verbose > 0:
                print(f"Restoring model weights from the end of the best epoch: {self.best_epoch + 1}.")
            self.model.set_weights(self.best_weights)


class ModelCheckpoint(MonitorCallback):
    """Save the model (``model.save``, a ``.keras`` file) or its weights
    (``save_weights``, tapeflow's checkpoint format at that prefix) at the end of
    every epoch, or every ``save_freq`` batches.

    ``filepath`` may hold ``{epoch:02d}`` (1-based, as Keras) and any log key,
    e.g. ``{val_loss:.2f}``. With ``save_best_only`` the file is written only
    when ``monitor`` improves (the first value always does, unless
    ``initial_value_threshold`` is better)."""

    def __init__(self, filepath, monitor="val_loss", verbose=0, save_best_only=False, save_weights_only=False,
                 mode="auto", save_freq="epoch", initial_value_threshold=None):
        super().__init__(monitor, mode, initial_value_threshold)
        self.verbose = verbose
        self.filepath = os.fspath(filepath)
        self.save_best_only = save_best_only
        self.save_weights_only = save_weights_only
        self.save_freq = save_freq
        self._batches_seen_since_last_saving = 0
        self._last_batch_seen = None
        self._current_epoch = 0
        if save_freq != "epoch" and not (isinstance(save_freq, int) and not isinstance(save_freq, bool)):
            raise ValueError(f"Unrecognized save_freq: {save_freq}. Expected save_freq are 'epoch' or integer "
                             "values")
        # Keras 3 wants `.weights.h5` for weights alone; tapeflow's save_weights writes its own
        # checkpoint format at any prefix, so any name is taken. A whole model must be a .keras file.
        if not save_weights_only and not self.filepath.endswith(".keras"):
            hint = (" (tapeflow does not write HDF5; use .keras)" if self.filepath.endswith(".h5") else "")
            raise ValueError("The filepath provided must end in `.keras` (Keras model format). Received: "
                             f"filepath={self.filepath}{hint}")

    def on_train_batch_end(self, batch, logs=None):
        if self._should_save_on_batch(batch):
            self._save_model(self._current_epoch, batch, logs)

    def on_epoch_begin(self, epoch, logs=None):
        self._current_epoch = epoch

    def on_epoch_end(self, epoch, logs=None):
        if self.monitor_op is None:
            self._set_monitor_op()
        if self.save_freq == "epoch":
            self._save_model(epoch, None, logs)

    def _should_save_on_batch(self, batch):
        if self.save_freq == "epoch":
            return False
        if self._last_batch_seen is None or batch <= self._last_batch_seen:
            add = batch + 1         # a new epoch: batches count from 0 again
        else:
            add = batch - self._last_batch_seen
        self._batches_seen_since_last_saving += add
        self._last_batch_seen = batch
        if self._batches_seen_since_last_saving >= self.save_freq:
            self._batches_seen_since_last_saving = 0
            return True
        return False

    def _get_file_path(self, epoch, batch, logs):
        logs = logs or {}
        try:
            if batch is None or "batch" in logs:
                return self.filepath.format(epoch=epoch + 1, **logs)
            return self.filepath.format(epoch=epoch + 1, batch=batch + 1, **logs)
        except KeyError as e:
            raise KeyError(f'Failed to format this callback filepath: "{self.filepath}". Reason: {e} (the '
                           f"logs hold {sorted(logs)})") from None

    def _should_save_model(self, epoch, logs, filepath):
        if not self.save_best_only:
            if self.verbose > 0:
                print(f"\nEpoch {epoch + 1}: saving model to {filepath}")
            return True
        current = (logs or {}).get(self.monitor)
        if current is None:
            warnings.warn(f"Can save best model only with {self.monitor} available.", stacklevel=3)
            return True
        if self.monitor_op is None:
            self._set_monitor_op()
        best_str = "None" if self.best is None else f"{self.best:.5f}"
        if self._is_improvement(current, self.best):
            if self.verbose > 0:
                print(f"\nEpoch {epoch + 1}: {self.monitor} improved from {best_str} to {current:.5f}, saving "
                      f"model to {filepath}")
            self.best = current
            return True
        if self.verbose > 0:
            print(f"\nEpoch {epoch + 1}: {self.monitor} did not improve from {best_str}")
        return False

    def _save_model(self, epoch, batch, logs):
        filepath = self._get_file_path(epoch, batch, logs)
        if not self._should_save_model(epoch, logs, filepath):
            return
        if os.path.isdir(filepath):
            raise IsADirectoryError("Please specify a non-directory filepath for ModelCheckpoint. Filepath used "
                                    f"is an existing directory: {filepath}")
        d = os.path.dirname(filepath)
        if d:
            os.makedirs(d, exist_ok=True)
        if self.save_weights_only:
            self.model.save_weights(filepath, overwrite=True)
        else:
            self.model.save(filepath, overwrite=True)
        if self.verbose > 0:
            print(f"\nEpoch {epoch + 1}: finished saving model to {filepath}")


class TensorBoard(Callback):
    """Write the epoch logs as TensorBoard scalars (through ``tapeflow.summary``),
    laid out as Keras does: ``log_dir/train`` gets ``epoch_loss``,
    ``epoch_<metric>`` and ``epoch_learning_rate``; ``log_dir/validation`` gets
    the ``val_`` logs under the same tags and ``evaluation_<name>_vs_iterations``
    (step = optimizer iterations) after each validation. Steps are epochs
    (0-based). ``update_freq="batch"`` or an integer N also writes
    ``batch_<name>`` every N training batches. Graphs, histograms, images and
    profiling are not written (``histogram_freq``, ``write_graph``... are
    accepted and ignored)."""

    def __init__(self, log_dir="logs", histogram_freq=0, write_graph=True, write_images=False,
                 write_steps_per_second=False, update_freq="epoch", profile_batch=0, embeddings_freq=0,
                 embeddings_metadata=None):
        super().__init__()
        self.log_dir = os.fspath(log_dir)
        if update_freq == "batch":
            update_freq = 1
        if update_freq != "epoch" and not (isinstance(update_freq, int) and update_freq > 0):
            raise ValueError(f"TensorBoard: update_freq must be 'epoch', 'batch' or a positive integer, got "
                             f"{update_freq!r}")
        self.update_freq = update_freq
        self._writers = {}
        self._global_train_batch = 0

    def _writer(self, which):
        from .. import summary
        w = self._writers.get(which)
        if w is None or w.closed:
            w = self._writers[which] = summary.create_file_writer(os.path.join(self.log_dir, which))
        return w

    def _write(self, which, values, prefix, step):
        from .. import summary
        with self._writer(which).as_default():
            for name, value in values.items():
                if np.ndim(value) == 0:
                    summary.scalar(f"{prefix}{name}", float(value), step=int(step))

    def on_train_begin(self, logs=None):
        self._global_train_batch = 0

    def on_train_batch_end(self, batch, logs=None):
        self._global_train_batch += 1
        if self.update_freq != "epoch" and self._global_train_batch % self.update_freq == 0:
            self._write("train", logs or {}, "batch_", self._global_train_batch)

    def on_test_end(self, logs=None):
        opt = getattr(self.model, "optimizer", None)
        if opt is not None and hasattr(opt, "iterations") and logs:
            step = int(np.asarray(opt.iterations.numpy()))
            self._write("validation", {f"evaluation_{k}_vs_iterations": v for k, v in logs.items()}, "", step)

    def on_epoch_end(self, epoch, logs=None):
        logs = logs or {}
        train = {k: v for k, v in logs.items() if not k.startswith("val_")}
        val = {k[4:]: v for k, v in logs.items() if k.startswith("val_")}
        lr = getattr(getattr(self.model, "optimizer", None), "learning_rate", None)
        if lr is not None:      # Keras adds the optimizer's current rate to the train scalars
            train["learning_rate"] = float(np.asarray(lr.numpy() if hasattr(lr, "numpy") else lr))
        if train:
            self._write("train", train, "epoch_", epoch)
        if val:
            self._write("validation", val, "epoch_", epoch)

    def on_train_end(self, logs=None):
        for w in self._writers.values():
            w.close()
        self._writers = {}


def _lr_value(optimizer):
    """The optimizer's learning rate now, as a Python float (Keras 3 reads
    ``float(convert_to_numpy(optimizer.learning_rate))``: the float32 value widened)."""
    if not hasattr(optimizer, "learning_rate"):
        raise ValueError('Optimizer must have a "learning_rate" attribute.')
    lr = optimizer.learning_rate
    return float(lr.numpy() if hasattr(lr, "numpy") else lr)


def _set_lr(optimizer, value):
    # Keras 3 refuses to overwrite a LearningRateSchedule (tapeflow's setter would replace it
    # silently, and the schedule the program asked for would be gone)
    from ..optimizers.schedules import LearningRateSchedule
    if isinstance(getattr(optimizer, "_schedule", None), LearningRateSchedule):
        raise TypeError("This optimizer was created with a `LearningRateSchedule` object as its `learning_rate` "
                        "constructor argument, hence its learning rate is not settable. If you need the learning "
                        "rate to be settable, you should instantiate the optimizer with a float `learning_rate` "
                        "argument.")
    optimizer.learning_rate = value


class LearningRateScheduler(Callback):
    """At each epoch's start, sets the optimizer's learning rate to ``schedule(epoch, lr)``
    (or ``schedule(epoch)``, the old form, when the two-argument call raises TypeError);
    at its end logs it as ``learning_rate`` (so History and CSVLogger record it)."""

    def __init__(self, schedule, verbose=0):
        super().__init__()
        self.schedule = schedule
        self.verbose = verbose

    def on_epoch_begin(self, epoch, logs=None):
        opt = self.model.optimizer
        try:
            lr = self.schedule(epoch, _lr_value(opt))
        except TypeError:       # as Keras 3: the one-argument schedule of TF 1.x-era code
            lr = self.schedule(epoch)
        if not isinstance(lr, (float, np.float32, np.float64)):
            raise ValueError(f"The output of the `schedule` function should be a float. Got: {lr}")
        _set_lr(opt, lr)
        if self.verbose > 0:
            print(f"\nEpoch {epoch + 1}: LearningRateScheduler setting learning rate to {lr}.")

    def on_epoch_end(self, epoch, logs=None):
        if logs is not None:
            logs["learning_rate"] = _lr_value(self.model.optimizer)


class ReduceLROnPlateau(MonitorCallback):
    """Multiply the learning rate by ``factor`` (not below ``min_lr``) when ``monitor`` has
    not improved by ``min_delta`` for ``patience`` epochs, then wait ``cooldown`` epochs
    (Keras 3's rules, including its order: a cooldown epoch resets the wait; logs
    ``learning_rate`` at each epoch's end, before the change)."""

    def __init__(self, monitor="val_loss", factor=0.1, patience=10, verbose=0, mode="auto", min_delta=1e-4,
                 cooldown=0, min_lr=0.0, **kwargs):
        super().__init__(monitor, mode, min_delta=min_delta)
        if factor >= 1.0:
            raise ValueError(f"ReduceLROnPlateau does not support a factor >= 1.0. Received factor={factor}")
        self.factor = factor
        self.min_lr = min_lr
        self.patience = patience
        self.verbose = verbose
        self.cooldown = cooldown
        self.cooldown_counter = 0
        self.wait = 0

    def _reset(self):
        self.best = None
        self.cooldown_counter = 0
        self.wait = 0

    def on_train_begin(self, logs=None):
        self._reset()

    def in_cooldown(self):
        return self.cooldown_counter > 0

    def on_epoch_end(self, epoch, logs=None):
        if self.monitor_op is None:
            self._set_monitor_op()
        logs = logs if logs is not None else {}
        opt = self.model.optimizer
        logs["learning_rate"] = _lr_value(opt)
        current = logs.get(self.monitor)
        if current is None:
            warnings.warn(f"Learning rate reduction is conditioned on metric `{self.monitor}` which is not "
                          f"available. Available metrics are: {','.join(list(logs.keys()))}.", stacklevel=2)
            return
        if self.in_cooldown():
            self.cooldown_counter -= 1
            self.wait = 0
        if self._is_improvement(current, self.best):
            self.best = current
            self.wait = 0
        elif not self.in_cooldown():
            self.wait += 1
            if self.wait >= self.patience:
                old = _lr_value(opt)
                # Keras compares with min_lr rounded to float32, the variable's precision
                if old > np.float32(self.min_lr):
                    new = max(old * self.factor, self.min_lr)
                    _set_lr(opt, new)
                    if self.verbose > 0:
                        print(f"\nEpoch {epoch + 1}: ReduceLROnPlateau reducing learning rate to {new}.")
                    self.cooldown_counter = self.cooldown
                    self.wait = 0


class CSVLogger(Callback):
    """One CSV row per epoch: ``epoch`` then the logs' keys, sorted (Keras 3: the header is
    the first epoch's keys, plus ``val_*`` twins when that epoch had none; a key missing
    later is ``NA``; a vector value is written ``"[a, b]"``). ``append=True`` adds to an
    existing file and writes the header only when the file is empty."""

    def __init__(self, filename, separator=",", append=False):
        super().__init__()
        self.sep = separator
        self.filename = os.fspath(filename)
        self.append = append
        self.writer = None
        self.keys = None
        self.append_header = True
        self.csv_file = None

    def on_train_begin(self, logs=None):
        if self.append:
            if os.path.exists(self.filename):
                with open(self.filename) as f:
                    self.append_header = not bool(len(f.readline()))
            mode = "a"
        else:
            mode = "w"
        if self.csv_file and not self.csv_file.closed:
            self.csv_file.close()
        # opened as Keras 3 opens it (plain open): rows end in the csv module's \r\n
        self.csv_file = open(self.filename, mode)
        self.writer = None
        self.keys = None

    @staticmethod
    def _value(v):
        if isinstance(v, str):
            return v
        if isinstance(v, collections.abc.Iterable) and not (isinstance(v, np.ndarray) and v.ndim == 0):
            return f'"[{", ".join(map(str, v))}]"'
        return v

    def on_epoch_end(self, epoch, logs=None):
        logs = logs or {}
        if self.keys is None:
            self.keys = sorted(logs.keys())
            if self.keys and not any(k.startswith("val_") for k in self.keys):
                self.keys.extend([f"val_{k}" for k in self.keys])
        if not self.writer:
            sep = self.sep

            class _Dialect(csv.excel):
                delimiter = sep

            self.writer = csv.DictWriter(self.csv_file, fieldnames=["epoch"] + (self.keys or []), dialect=_Dialect)
            if self.append_header:
                self.writer.writeheader()
        row = collections.OrderedDict({"epoch": epoch})
        row.update((k, self._value(logs.get(k, "NA"))) for k in self.keys)
        self.writer.writerow(row)
        self.csv_file.flush()

    def on_train_end(self, logs=None):
        if self.csv_file and not self.csv_file.closed:
            self.csv_file.close()
        self.writer = None


class TerminateOnNaN(Callback):
    """Stops training at the first batch whose loss is NaN or inf (``raise_error``: raises a
    RuntimeError there instead)."""

    def __init__(self, raise_error=False):
        super().__init__()
        self.raise_error = bool(raise_error)

    def on_batch_end(self, batch, logs=None):
        loss = (logs or {}).get("loss")
        if loss is not None and not np.isfinite(loss):
            if self.raise_error:
                raise RuntimeError(f"NaN or Inf loss encountered at batch {batch}. Loss value: {loss}. Terminating "
                                   "training immediately.")
            print(f"Batch {batch}: Invalid loss, terminating training")
            self.model.stop_training = True


class BackupAndRestore(Callback):
    """Keras 3's fault-tolerance callback: back up the training state to ``backup_dir`` at the
    end of every epoch (``save_freq="epoch"``) or every ``save_freq`` batches, and, when a later
    ``fit`` starts with a backup there (the earlier one was interrupted by an exception), restore
    it: the model's weights, the optimizer's state (slots, iterations, a loss-scale optimizer's
    scale) and where training was, so ``fit`` goes on from that epoch and step.

    The backup is one tapeflow checkpoint (``tapeflow.train.Checkpoint`` of the model, its
    optimizer and the progress as two int64 variables): written to temporary files and renamed,
    its index last, so an interruption while saving leaves the previous backup whole, never a
    half-written one. ``double_checkpoint=True`` writes two checkpoints in turn and restores the
    newer one that reads, falling back to the other if that one is damaged (Keras keeps a
    ``.bkp`` copy for the same purpose). ``delete_checkpoint=True`` removes ``backup_dir`` when
    ``fit`` ends normally.

    Where TF 2.21 differs: Keras 3 restores the weights of a mid-epoch backup but restarts that
    epoch from its first batch (it records the batch and does not use it), so batches are
    trained twice; tapeflow skips the batches the backup had trained, so an interrupted and
    resumed ``fit`` with ``shuffle=False`` ends with an uninterrupted one's weights. (With
    shuffling, the resumed epoch's order is drawn anew.) Its files are tapeflow checkpoints
    (``latest.json`` + a ``.safetensors``), not Keras' ``latest.weights.h5``."""

    def __init__(self, backup_dir, save_freq="epoch", double_checkpoint=False, delete_checkpoint=True):
        super().__init__()
        if not backup_dir:
            raise ValueError("Empty `backup_dir` argument passed")        # TF 2.21's message
        if save_freq != "epoch" and not (isinstance(save_freq, int) and not isinstance(save_freq, bool)):
            # TF 2.21's message
            raise ValueError(f"Invalid value for argument `save_freq`. Received: save_freq={save_freq}. "
                             "Expected either 'epoch' or an integer value.")
        if isinstance(save_freq, int) and save_freq <= 0:
            raise ValueError(f"BackupAndRestore: save_freq must be a positive number of batches, got {save_freq}")
        self.backup_dir = os.fspath(backup_dir)
        self.save_freq = save_freq
        self.double_checkpoint = bool(double_checkpoint)
        self.delete_checkpoint = bool(delete_checkpoint)
        self._batches_since_save = 0
        self._epoch = 0             # the epoch in progress
        self._turn = 0              # double_checkpoint: which of the two prefixes is written next
        self._progress = None

    def _prefixes(self):
        names = ("latest", "previous") if self.double_checkpoint else ("latest",)
        return [os.path.join(self.backup_dir, n) for n in names]

    def _checkpoint(self):
        from ..core.tensor import Variable
        from ..train.checkpoint import Checkpoint
        if self._progress is None:
            self._progress = (Variable(np.int64(0), trainable=False, name="backup/epoch"),
                              Variable(np.int64(0), trainable=False, name="backup/step"))
        # (the model's checkpoint keys hold its compiled optimizer's state too: model/optimizer/...)
        return Checkpoint(model=self.model, epoch=self._progress[0], step=self._progress[1])

    def on_train_begin(self, logs=None):
        from ..train import storage
        found = []
        for prefix in self._prefixes():
            if storage.exists(prefix):
                try:
                    meta = storage.read_index(prefix)
                except storage.CheckpointError:
                    continue
                found.append((meta.get("time", 0), prefix))
        errors = []
        for _, prefix in sorted(found, reverse=True):       # the newer first, then the other
            try:
                self._checkpoint().read(prefix)
            except storage.CheckpointError as e:
                errors.append(f"{prefix}: {e}")
                continue
            epoch, step = int(self._progress[0].numpy()), int(self._progress[1].numpy())
            self._epoch = epoch
            self.model.__dict__["_resume_at"] = (epoch, step)     # read by fit after on_train_begin
            # the next backup goes to the other prefix (the one read stays the fallback)
            self._turn = 1 - self._prefixes().index(prefix) if self.double_checkpoint else 0
            return
        if errors:
            raise storage.CheckpointError("BackupAndRestore: no backup in " + repr(self.backup_dir) +
                                          " could be read: " + "; ".join(errors))

    def on_epoch_begin(self, epoch, logs=None):
        self._epoch = epoch

    def on_epoch_end(self, epoch, logs=None):
        if self.save_freq == "epoch":
            self._save(epoch + 1, 0)

    def on_train_batch_end(self, batch, logs=None):
        if self.save_freq == "epoch":
            return
        self._batches_since_save += 1
        if self._batches_since_save >= self.save_freq:
            self._batches_since_save = 0
            self._save(self._epoch, batch + 1)

    def _save(self, epoch, step):
        ckpt = self._checkpoint()
        self._progress[0].assign(np.int64(epoch))
        self._progress[1].assign(np.int64(step))
        os.makedirs(self.backup_dir, exist_ok=True)
        prefixes = self._prefixes()
        ckpt.write(prefixes[self._turn])
        if self.double_checkpoint:
            self._turn = 1 - self._turn

    def on_train_end(self, logs=None):
        if self.delete_checkpoint and os.path.isdir(self.backup_dir):
            import shutil
            shutil.rmtree(self.backup_dir)


# --- wave 21 (keras21): ProgbarLogger, RemoteMonitor ------------------------------------------

class ProgbarLogger(Callback):
    """Keras 3's progress-bar callback: per epoch ``Epoch i/N`` (when N > 1), then a
    ``keras.utils.Progbar`` over the epoch's steps showing each batch's logs as given (Keras 3's
    bars do not average them). ``fit``/``evaluate``/``predict`` pass it ``params``; inside ``fit``
    the validation pass is silent. With a ProgbarLogger among ``fit``'s callbacks, tapeflow's own
    one-line-per-epoch summary is left out (Keras adds its own logger only when none is given)."""

    def __init__(self):
        super().__init__()
        self.seen = 0
        self.progbar = None
        self.target = None
        self.verbose = 1
        self.epochs = 1
        self._called_in_fit = False

    def set_params(self, params):
        super().set_params(params)
        verbose = params.get("verbose", 1)
        self.verbose = 1 if verbose == "auto" else verbose
        self.epochs = params.get("epochs", 1)
        self.target = params.get("steps")

    def on_train_begin(self, logs=None):
        self._called_in_fit = True

    def on_test_begin(self, logs=None):
        if not self._called_in_fit:
            self._reset_progbar()
            self._maybe_init_progbar()

    def on_predict_begin(self, logs=None):
        self._reset_progbar()
        self._maybe_init_progbar()

    def on_epoch_begin(self, epoch, logs=None):
        self._reset_progbar()
        self._maybe_init_progbar()
        if self.verbose and self.epochs > 1:
            print(f"Epoch {epoch + 1}/{self.epochs}")

    def on_train_batch_end(self, batch, logs=None):
        self._update_progbar(batch, logs)

    def on_test_batch_end(self, batch, logs=None):
        if not self._called_in_fit:
            self._update_progbar(batch, logs)

    def on_predict_batch_end(self, batch, logs=None):
        self._update_progbar(batch, None)    # (not the predictions)

    def on_epoch_end(self, epoch, logs=None):
        self._finalize_progbar(logs)

    def on_test_end(self, logs=None):
        if not self._called_in_fit:
            self._finalize_progbar(logs)

    def on_predict_end(self, logs=None):
        self._finalize_progbar(logs)

    def _reset_progbar(self):
        self.seen = 0
        self.progbar = None

    def _maybe_init_progbar(self):
        if self.progbar is None:
            from .utils import Progbar
            self.progbar = Progbar(target=self.target, verbose=self.verbose, unit_name="step")

    def _values(self, logs):
        logs = logs or {}
        self.progbar.stateful_metrics.update(logs)    # shown as given (Keras 3's stateless bars)
        return [(k, v) for k, v in logs.items() if np.ndim(v) == 0]

    def _update_progbar(self, batch, logs=None):
        self._maybe_init_progbar()
        self.seen = batch + 1
        if self.verbose == 1:
            self.progbar.update(self.seen, self._values(logs), finalize=False)

    def _finalize_progbar(self, logs):
        self._maybe_init_progbar()
        if self.target is None:
            self.target = self.seen
            self.progbar.target = self.target
        self.progbar.update(self.target, self._values(logs), finalize=True)


class RemoteMonitor(Callback):
    """Keras 3's RemoteMonitor: at each epoch's end, POST ``{"epoch": i, **logs}`` as JSON to
    ``root + path`` (``send_as_json``: an application/json body; else a form with ``field`` holding
    the JSON). Keras uses the ``requests`` library and raises ImportError without it; tapeflow
    sends with the standard library (urllib), so it needs no extra package. An unreachable server
    is Keras' warning "Could not reach RemoteMonitor root server at ...", and training goes on."""

    def __init__(self, root="http://localhost:9000", path="/publish/epoch/end/", field="data", headers=None,
                 send_as_json=False):
        super().__init__()
        self.root, self.path, self.field = root, path, field
        self.headers = headers
        self.send_as_json = send_as_json

    def on_epoch_end(self, epoch, logs=None):
        import json
        import urllib.error
        import urllib.parse
        import urllib.request
        send = {"epoch": epoch}
        for k, v in (logs or {}).items():
            send[k] = v.item() if isinstance(v, (np.ndarray, np.generic)) else v
        headers = dict(self.headers or {})
        if self.send_as_json:
            body = json.dumps(send).encode()
            headers.setdefault("Content-Type", "application/json")
        else:
            body = urllib.parse.urlencode({self.field: json.dumps(send)}).encode()
            headers.setdefault("Content-Type", "application/x-www-form-urlencoded")
        req = urllib.request.Request(self.root + self.path, data=body, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(req, timeout=10) as resp:
                resp.read()
        except (urllib.error.URLError, OSError, ValueError):
            # (requests' RequestException in Keras: connection refused, timeouts, HTTP errors, bad URLs)
            warnings.warn(f"Could not reach RemoteMonitor root server at {self.root}", stacklevel=2)


class SwapEMAWeights(Callback):
    """Keras 3's SwapEMAWeights: with an optimizer built with ``use_ema=True``, evaluate and predict
    run on the weights' moving averages (swapped in at their start, back at their end), so
    validation during ``fit`` measures the EMA model; ``swap_on_epoch=True`` also leaves the
    averages in the model at each epoch's end (swapped back at the next epoch's start; after the
    last epoch the averages are the final weights).

    Where tapeflow differs: the swap is an exact exchange of the two buffers (Keras' TF backend
    swaps by ``a += b; b = a - b; a -= b``, which can change the last bits), and predict swaps
    back at its end (Keras 3.15's on_predict_end tests the flag the wrong way round and leaves
    the averages in the model)."""

    def __init__(self, swap_on_epoch=False):
        super().__init__()
        self.swap_on_epoch = swap_on_epoch
        self._ema_weights_in_model = False

    def _optimizer(self):
        opt = self.model.optimizer
        opt = getattr(opt, "inner_optimizer", opt)
        if not getattr(opt, "use_ema", False):
            raise ValueError(f"SwapEMAWeights must be used when `use_ema=True` is set on the optimizer. Received: "
                             f"use_ema={getattr(opt, 'use_ema', False)}")
        return opt

    def _pairs(self):
        opt = self._optimizer()
        return [(v, opt._slots[id(v)]["average"]) for v in opt._slot_vars if "average" in opt._slots[id(v)]]

    def _swap_variables(self):
        for v, avg in self._pairs():
            w = v.read_value()
            v.assign(avg.read_value())
            avg.assign(w)

    def _finalize_ema_values(self):
        for v, avg in self._pairs():
            avg.assign(v.read_value())

    def on_epoch_begin(self, epoch, logs=None):
        if self.swap_on_epoch and self._ema_weights_in_model:
            self._swap_variables()
            self._ema_weights_in_model = False

    def on_epoch_end(self, epoch, logs=None):
        if self.swap_on_epoch and not self._ema_weights_in_model:
            self._swap_variables()
            self._ema_weights_in_model = True
            if epoch == self.params["epochs"] - 1:
                self._finalize_ema_values()

    def on_test_begin(self, logs=None):
        if not self._ema_weights_in_model:
            self._swap_variables()
            self._ema_weights_in_model = True

    def on_test_end(self, logs=None):
        if self._ema_weights_in_model:
            self._swap_variables()
            self._ema_weights_in_model = False

    on_predict_begin = on_test_begin
    on_predict_end = on_test_end


# wave 25: TF's name exists (importable, subclassable); using it raises, naming the feature
from .._unsupported import unsupported_class as _unsupported_class  # noqa: E402
OrbaxCheckpoint = _unsupported_class("keras.callbacks.OrbaxCheckpoint", base=Callback)
