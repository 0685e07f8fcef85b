"""``ember.utils.tensorboard``: logs for TensorBoard, with PyTorch's ``SummaryWriter``.

Scalars, histograms, images, text, hyperparameters, and the real autograd graph (the
``grad_fn`` nodes, grouped by module) in the Graphs tab. Event files are written with the
``tensorboard`` package (``pip install tensorboard``); neither TensorFlow nor PyTorch is
needed.

>>> import ember, tempfile
>>> from ember.utils.tensorboard import SummaryWriter
>>> with SummaryWriter(tempfile.mkdtemp()) as writer:
...     writer.add_scalar("loss", 0.25, global_step=1)
"""
from ._proto import EventFileWriter as _EventFileWriter
from .writer import FileWriter, SummaryWriter

__all__ = ["FileWriter", "SummaryWriter"]
