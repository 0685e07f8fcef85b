"""``SummaryWriter``: PyTorch's TensorBoard logger, writing event files with the
``tensorboard`` package's own writer."""
from __future__ import annotations

import os
import socket
import time
from datetime import datetime

from ...tensor import Tensor
from . import graph as _graph
from . import summary as _summary
from ._convert import as_step, check_tag
from ._proto import Event, EventFileWriter, SessionLog


class FileWriter:
    """One event file in ``log_dir``: events and summaries, written asynchronously by
    tensorboard's ``EventFileWriter`` (flushed every ``flush_secs`` or when ``max_queue``
    events wait)."""

    def __init__(self, log_dir, max_queue: int = 10, flush_secs: float = 120,
                 filename_suffix: str = ""):
        self.event_writer = EventFileWriter(str(log_dir), max_queue, flush_secs,
                                            filename_suffix)

    def get_logdir(self) -> str:
        return self.event_writer.get_logdir()

    def add_event(self, event, step=None, walltime=None) -> None:
        event.wall_time = time.time() if walltime is None else float(walltime)
        if step is not None:
            event.step = as_step(step)
        self.event_writer.add_event(event)

    def add_summary(self, summary, global_step=None, walltime=None) -> None:
        self.add_event(Event(summary=summary), global_step, walltime)

    def add_graph(self, graph_def, walltime=None) -> None:
        self.add_event(Event(graph_def=graph_def.SerializeToString()), None, walltime)

    def flush(self) -> None:
        self.event_writer.flush()

    def close(self) -> None:
        self.event_writer.close()


class SummaryWriter:
    """Writes scalars, histograms, images, text, hyperparameters and the autograd graph to
    event files in ``log_dir`` for TensorBoard, with PyTorch's API.

    Args:
        log_dir: where the event files go; default ``runs/<Mon>DD_HH-MM-SS_<hostname>``
            followed by ``comment``.
        comment: appended to the default ``log_dir`` (ignored when ``log_dir`` is given).
        purge_step: after a crash at step T+X, restart at step T with the same ``log_dir``
            and ``purge_step=T``: TensorBoard hides the old events from step T on.
        max_queue: events held before an ``add_*`` call forces a write to disk.
        flush_secs: how often, in seconds, pending events are written to disk.
        filename_suffix: appended to every event file's name.

    Example::

        >>> import ember, tempfile
        >>> from ember.utils.tensorboard import SummaryWriter
        >>> with SummaryWriter(tempfile.mkdtemp()) as writer:
        ...     for step in range(3):
        ...         writer.add_scalar("loss", 1.0 / (step + 1), step)
        ...     model = ember.nn.Sequential(ember.nn.Linear(4, 3), ember.nn.ReLU())
        ...     writer.add_graph(model, ember.randn(2, 4))

    Then ``tensorboard --logdir <log_dir>`` shows the loss in the Scalars tab and the
    autograd graph, ``Sequential/0/AddmmBackward0`` and all, in the Graphs tab.
    """

    def __init__(self, log_dir=None, comment: str = "", purge_step: int | None = None,
                 max_queue: int = 10, flush_secs: float = 120, filename_suffix: str = ""):
        if not log_dir:
            stamp = datetime.now().strftime("%b%d_%H-%M-%S")
            log_dir = os.path.join("runs", stamp + "_" + socket.gethostname() + comment)
        self.log_dir = str(log_dir)
        self.purge_step = purge_step
        self.max_queue = max_queue
        self.flush_secs = flush_secs
        self.filename_suffix = filename_suffix
        self.file_writer = self.all_writers = None
        self._get_file_writer()

    def _get_file_writer(self) -> FileWriter:
        """The writer of ``log_dir``, made again (a new event file) after ``close()``."""
        if self.all_writers is None or self.file_writer is None:
            self.file_writer = FileWriter(self.log_dir, self.max_queue, self.flush_secs,
                                          self.filename_suffix)
            self.all_writers = {self.file_writer.get_logdir(): self.file_writer}
            if self.purge_step is not None:
                # An event at purge_step with a START session log tells TensorBoard to drop
                # the events at or after that step from the earlier, crashed run.
                step = as_step(self.purge_step)
                self.file_writer.add_event(Event(step=step, file_version="brain.Event:2"))
                self.file_writer.add_event(
                    Event(step=step, session_log=SessionLog(status=SessionLog.START)))
                self.purge_step = None
        return self.file_writer

    def get_logdir(self) -> str:
        """The directory the event files are written to."""
        return self.log_dir

    # ------------------------------------------------------------------ numbers
    def add_scalar(self, tag: str, scalar_value, global_step=None, walltime=None,
                   new_style: bool = False, double_precision: bool = False) -> None:
        """One number (a Python number or a one-element tensor) at ``global_step``.

        Example::

            >>> import tempfile
            >>> from ember.utils.tensorboard import SummaryWriter
            >>> writer = SummaryWriter(tempfile.mkdtemp())
            >>> for step in range(10):
            ...     writer.add_scalar("y=2x", 2 * step, step)
            >>> writer.close()
        """
        self._get_file_writer().add_summary(
            _summary.scalar(tag, scalar_value, new_style, double_precision), global_step,
            walltime)

    def add_scalars(self, main_tag: str, tag_scalar_dict: dict, global_step=None,
                    walltime=None) -> None:
        """Several numbers on one chart: each ``tag`` goes to its own run, the folder
        ``<log_dir>/<main_tag>_<tag>``, under the chart name ``main_tag``.

        Example::

            >>> import math, tempfile
            >>> from ember.utils.tensorboard import SummaryWriter
            >>> writer = SummaryWriter(tempfile.mkdtemp())
            >>> for step in range(10):
            ...     writer.add_scalars("run_14h", {"sin": math.sin(step / 3),
            ...                                    "cos": math.cos(step / 3)}, step)
            >>> writer.close()
        """
        check_tag(main_tag, "main_tag")
        if not isinstance(tag_scalar_dict, dict):
            raise TypeError("tag_scalar_dict must be a dict of tag -> number, got "
                            f"{type(tag_scalar_dict).__name__}")
        base = self._get_file_writer().get_logdir()
        for tag, value in tag_scalar_dict.items():
            check_tag(tag, "each key of tag_scalar_dict")
            folder = base + "/" + main_tag.replace("/", "_") + "_" + tag
            writer = self.all_writers.get(folder)
            if writer is None:
                writer = FileWriter(folder, self.max_queue, self.flush_secs, self.filename_suffix)
                self.all_writers[folder] = writer
            writer.add_summary(_summary.scalar(main_tag, value), global_step, walltime)

    def add_histogram(self, tag: str, values, global_step=None, bins="tensorflow",
                      walltime=None, max_bins: int | None = None) -> None:
        """The distribution of ``values`` (a tensor or array of any shape) at
        ``global_step``: the Histograms and Distributions tabs. ``bins`` is
        ``'tensorflow'`` (TensorBoard's own edges) or anything ``numpy.histogram`` takes.

        Example::

            >>> import ember, tempfile
            >>> from ember.utils.tensorboard import SummaryWriter
            >>> writer = SummaryWriter(tempfile.mkdtemp())
            >>> for step in range(5):
            ...     writer.add_histogram("weights", ember.randn(1000) + step, step)
            >>> writer.close()
        """
        self._get_file_writer().add_summary(
            _summary.histogram(tag, values, bins, max_bins), global_step, walltime)

    # ------------------------------------------------------------------ pictures, text
    def add_image(self, tag: str, img_tensor, global_step=None, walltime=None,
                  dataformats: str = "CHW") -> None:
        """One image: ``(3, H, W)`` by default, or ``(1, H, W)``, ``(H, W, 3)``, ``(H, W)``
        ... with ``dataformats`` naming the axes. Floats are taken to lie in [0, 1], uint8
        in [0, 255]; PNG-encoded without any imaging library.

        Example::

            >>> import numpy as np, tempfile
            >>> from ember.utils.tensorboard import SummaryWriter
            >>> img = np.zeros((3, 64, 64))
            >>> img[0] = np.linspace(0, 1, 64)  # a red ramp
            >>> writer = SummaryWriter(tempfile.mkdtemp())
            >>> writer.add_image("ramp", img, 0)
            >>> writer.close()
        """
        self._get_file_writer().add_summary(
            _summary.image(tag, img_tensor, dataformats), global_step, walltime)

    def add_images(self, tag: str, img_tensor, global_step=None, walltime=None,
                   dataformats: str = "NCHW") -> None:
        """A batch of images (``(N, 3, H, W)`` by default), shown as one grid of up to 8
        columns."""
        self._get_file_writer().add_summary(
            _summary.image(tag, img_tensor, dataformats), global_step, walltime)

    def add_text(self, tag: str, text_string: str, global_step=None, walltime=None) -> None:
        """Markdown text for the Text tab.

        Example::

            >>> import tempfile
            >>> from ember.utils.tensorboard import SummaryWriter
            >>> writer = SummaryWriter(tempfile.mkdtemp())
            >>> writer.add_text("notes", "lr **0.1**, batch 64", 0)
            >>> writer.close()
        """
        self._get_file_writer().add_summary(
            _summary.text(tag, text_string), global_step, walltime)

    def add_hparams(self, hparam_dict: dict, metric_dict: dict,
                    hparam_domain_discrete: dict | None = None, run_name: str | None = None,
                    global_step=None) -> None:
        """One trial's hyperparameters and the metrics it reached, for the HParams tab.
        They go to a run of their own, ``<log_dir>/<run_name>`` (default: the time), with
        the metrics as scalars there.

        Example::

            >>> import tempfile
            >>> from ember.utils.tensorboard import SummaryWriter
            >>> with SummaryWriter(tempfile.mkdtemp()) as writer:
            ...     for i, lr in enumerate([0.1, 0.01]):
            ...         writer.add_hparams({"lr": lr, "batch": 64, "optimizer": "sgd"},
            ...                            {"hparam/accuracy": 0.9 - lr}, run_name=f"trial{i}")
        """
        if type(hparam_dict) is not dict or type(metric_dict) is not dict:
            raise TypeError("hparam_dict and metric_dict should be dictionary.")
        experiment, start, end = _summary.hparams(hparam_dict, metric_dict,
                                                  hparam_domain_discrete)
        scalars = [_summary.scalar(tag, value) for tag, value in metric_dict.items()]
        run = os.path.join(self._get_file_writer().get_logdir(), run_name or str(time.time()))
        with SummaryWriter(log_dir=run, max_queue=self.max_queue, flush_secs=self.flush_secs,
                           filename_suffix=self.filename_suffix) as run_writer:
            for proto in (experiment, start, end, *scalars):
                run_writer.file_writer.add_summary(proto, global_step)

    # ------------------------------------------------------------------ the graph
    def add_graph(self, model, input_to_model=None, verbose: bool = False,
                  use_strict_trace: bool = True, *, params: dict | None = None) -> None:
        """The real autograd graph, in the Graphs tab: one node per ``grad_fn``
        (``AddmmBackward0``, ``ReluBackward0``, ...) wired along ``next_functions``, the
        leaves (parameters, inputs) as ``AccumulateGrad`` nodes, and shapes and dtypes as
        node attributes.

        - ``add_graph(model, input_to_model)`` runs ``model(input_to_model)`` (a tuple or
          list is unpacked into positional arguments) and names each node by the module
          that made it: ``Net/fc1/AddmmBackward0``, ``Net/fc1/weight``.
        - ``add_graph(output)`` (a tensor, or a tuple or list of them) draws the graph that
          already led to ``output``; ``params=dict(model.named_parameters())`` names the
          leaves.

        ``verbose=True`` prints the nodes. ``use_strict_trace`` is accepted for PyTorch's
        signature and has no effect: nothing is traced, the graph is autograd's own.

        Example::

            >>> import ember, tempfile
            >>> from ember.utils.tensorboard import SummaryWriter
            >>> model = ember.nn.Sequential(ember.nn.Linear(4, 8), ember.nn.ReLU(),
            ...                             ember.nn.Linear(8, 2))
            >>> with SummaryWriter(tempfile.mkdtemp()) as writer:
            ...     writer.add_graph(model, ember.randn(16, 4))
        """
        del use_strict_trace
        if isinstance(model, Tensor) or (
                isinstance(model, (tuple, list)) and model
                and all(isinstance(t, Tensor) for t in model)):
            if input_to_model is not None:
                raise TypeError("add_graph(output) draws the graph behind output tensors and "
                                "takes no input_to_model; to run a model, pass the model")
            graph_def = _graph.graph_of_tensors(model, params, verbose)
        else:
            graph_def = _graph.graph_of_model(model, input_to_model, params, verbose)
        self._get_file_writer().add_graph(graph_def)

    # ------------------------------------------------------------------ lifetime
    def flush(self) -> None:
        """Write every pending event of every run to disk."""
        if self.all_writers is None:
            return
        for writer in self.all_writers.values():
            writer.flush()

    def close(self) -> None:
        """Flush and close every event file; a later ``add_*`` starts a new one."""
        if self.all_writers is None:
            return
        for writer in self.all_writers.values():
            writer.flush()
            writer.close()
        self.file_writer = self.all_writers = None

    def __enter__(self) -> SummaryWriter:
        return self

    def __exit__(self, exc_type, exc_value, traceback) -> None:
        self.close()
