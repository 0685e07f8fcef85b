"""Summary protos for scalars, histograms, images, text and hyperparameters, in the forms
TensorBoard's plugins read (the same ones PyTorch's ``SummaryWriter`` writes)."""
from __future__ import annotations

import numpy as np

from ._convert import check_tag, encode_png, image_to_uint8, to_hwc, to_numpy
from ._proto import (
    HistogramProto,
    Summary,
    SummaryMetadata,
    TensorProto,
    TensorShapeProto,
    hparams_api_pb2,
    hparams_metadata,
    hparams_plugin_data_pb2,
    struct_pb2,
    text_plugin_data_pb2,
)

_TF_BINS = None


def tensorflow_bins() -> list:
    """TensorBoard's default histogram edges: +-1e-12 growing by 10% a step up to 1e20,
    and 0 (1549 edges); fine near zero and relative everywhere else."""
    global _TF_BINS
    if _TF_BINS is None:
        positive = []
        v = 1e-12
        while v < 1e20:
            positive.append(v)
            v *= 1.1
        _TF_BINS = [-p for p in reversed(positive)] + [0.0] + positive
    return _TF_BINS


def scalar(tag: str, value, new_style: bool = False, double_precision: bool = False):
    """A one-number Summary: ``simple_value``, or with ``new_style`` a tensor the scalars
    plugin reads directly (float32, or float64 with ``double_precision``)."""
    check_tag(tag)
    array = to_numpy(value).squeeze()
    if array.ndim != 0:
        raise AssertionError(
            f"Tensor should contain one element (0 dimensions). Was given size: {array.size} "
            f"and {array.ndim} dimensions (for scalar {tag!r}).")
    number = float(array)
    if not new_style:
        return Summary(value=[Summary.Value(tag=tag, simple_value=number)])
    tensor = (TensorProto(dtype="DT_DOUBLE", double_val=[number]) if double_precision
              else TensorProto(dtype="DT_FLOAT", float_val=[number]))
    metadata = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name="scalars"))
    return Summary(value=[Summary.Value(tag=tag, tensor=tensor, metadata=metadata)])


def make_histogram(values, bins="tensorflow", max_bins: int | None = None) -> HistogramProto:
    """A HistogramProto of ``values`` over ``bins`` (as ``numpy.histogram`` takes them, or
    ``'tensorflow'``), merging neighbouring bins down to at most ``max_bins``.

    TensorBoard stores each bucket's right edge only, so the empty bins at both ends are
    dropped and one empty bucket is kept whose right edge is the left edge of the data."""
    values = to_numpy(values).astype(np.float64).reshape(-1)
    if values.size == 0:
        raise ValueError("The input has no element.")
    nonfinite = values.size - int(np.count_nonzero(np.isfinite(values)))
    if nonfinite:
        raise ValueError(
            f"the histogram values hold {nonfinite} NaN or infinite value(s) of {values.size}; "
            "TensorBoard cannot bin them (find them with ember.isfinite)")
    if isinstance(bins, str) and bins == "tensorflow":
        bins = tensorflow_bins()
    counts, edges = np.histogram(values, bins=bins)
    if max_bins is not None:
        if isinstance(max_bins, bool) or not isinstance(max_bins, (int, np.integer)) \
                or max_bins < 1:
            raise ValueError(f"max_bins must be a positive int, got {max_bins!r}")
        if len(counts) > max_bins:
            group = len(counts) // max_bins
            counts = np.pad(counts, (0, (-len(counts)) % group)).reshape(-1, group).sum(axis=1)
            edges = np.append(edges[:-1:group], edges[-1])
    filled = np.flatnonzero(counts)
    if filled.size == 0:
        raise ValueError(
            f"none of the {values.size} values lies inside the bins "
            f"[{edges[0]:g}, {edges[-1]:g}] (values span [{values.min():g}, {values.max():g}])")
    first, last = int(filled[0]), int(filled[-1])
    return HistogramProto(
        min=float(values.min()), max=float(values.max()), num=float(values.size),
        sum=float(values.sum()), sum_squares=float(values.dot(values)),
        bucket_limit=edges[first:last + 2].tolist(),
        bucket=[0.0] + counts[first:last + 1].astype(np.float64).tolist())


def histogram(tag: str, values, bins="tensorflow", max_bins: int | None = None):
    check_tag(tag)
    return Summary(value=[Summary.Value(tag=tag, histo=make_histogram(values, bins, max_bins))])


def image(tag: str, img, dataformats: str = "CHW"):
    """One image (or a batch laid out as a grid) as a PNG Summary.Image."""
    check_tag(tag)
    pixels = image_to_uint8(to_hwc(to_numpy(img), dataformats))
    height, width, channels = pixels.shape
    return Summary(value=[Summary.Value(tag=tag, image=Summary.Image(
        height=height, width=width, colorspace=channels,
        encoded_image_string=encode_png(pixels)))])


def text(tag: str, text_string: str):
    """Markdown text for the Text tab, under ``<tag>/text_summary`` as TensorBoard names it."""
    check_tag(tag)
    if not isinstance(text_string, str):
        raise TypeError(f"text_string must be a str, but got {type(text_string).__name__}")
    metadata = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(
        plugin_name="text",
        content=text_plugin_data_pb2.TextPluginData(version=0).SerializeToString()))
    tensor = TensorProto(dtype="DT_STRING", string_val=[text_string.encode("utf-8")],
                         tensor_shape=TensorShapeProto(dim=[TensorShapeProto.Dim(size=1)]))
    return Summary(value=[Summary.Value(tag=tag + "/text_summary", metadata=metadata,
                                        tensor=tensor)])


# ----------------------------------------------------------------------------- hparams
_TYPES = {"bool": "DATA_TYPE_BOOL", "number": "DATA_TYPE_FLOAT64", "string": "DATA_TYPE_STRING"}
_FIELDS = {"bool": "bool_value", "number": "number_value", "string": "string_value"}


def _hparam_value(name: str, value):
    """(kind, Python value) of one hyperparameter; bool before number (bool is an int)."""
    if isinstance(value, (bool, np.bool_)):
        return "bool", bool(value)
    if isinstance(value, str):
        return "string", value
    if isinstance(value, (int, float, np.integer, np.floating)):
        return "number", float(value)
    try:
        array = to_numpy(value)
    except NotImplementedError:
        array = None
    if array is not None and array.size == 1:
        item = array.reshape(()).item()
        return ("bool", item) if isinstance(item, bool) else ("number", float(item))
    raise ValueError(
        f"hyperparameter {name!r}: value should be one of int, float, str, bool, or a "
        f"one-element ember.Tensor, but got {type(value).__name__}")


def _plugin_summary(tag: str, **data):
    content = hparams_plugin_data_pb2.HParamsPluginData(**data)
    return Summary(value=[Summary.Value(
        tag=tag, metadata=hparams_metadata.create_summary_metadata(content),
        tensor=hparams_metadata.NULL_TENSOR)])


def hparams(hparam_dict: dict, metric_dict: dict, hparam_domain_discrete: dict | None = None):
    """The three Summaries of the HParams plugin: the experiment (which hyperparameters and
    metrics exist), the session's hyperparameter values, and its end."""
    if not isinstance(hparam_dict, dict) or not isinstance(metric_dict, dict):
        raise TypeError("hparam_dict and metric_dict should be dictionary.")
    domains = hparam_domain_discrete or {}
    if not isinstance(domains, dict):
        raise TypeError("parameter: hparam_domain_discrete should be a dictionary, nothing "
                        "logged.")
    for name, choices in domains.items():
        if name not in hparam_dict or not isinstance(choices, list) or not all(
                isinstance(c, type(hparam_dict[name])) for c in choices):
            raise TypeError(
                f"parameter: hparam_domain_discrete[{name}] should be a list of same type as "
                f"hparam_dict[{name}].")
    for name in list(hparam_dict) + list(metric_dict):
        check_tag(name, "a hyperparameter or metric name")
    start = hparams_plugin_data_pb2.SessionStartInfo()
    infos = []
    for name, value in hparam_dict.items():
        if value is None:
            continue
        kind, value = _hparam_value(name, value)
        setattr(start.hparams[name], _FIELDS[kind], value)
        info = hparams_api_pb2.HParamInfo(
            name=name, type=hparams_api_pb2.DataType.Value(_TYPES[kind]))
        if name in domains:
            info.domain_discrete.CopyFrom(struct_pb2.ListValue(values=[
                struct_pb2.Value(**{_FIELDS[kind]: _hparam_value(name, c)[1]})
                for c in domains[name]]))
        infos.append(info)
    experiment = hparams_api_pb2.Experiment(
        hparam_infos=infos,
        metric_infos=[hparams_api_pb2.MetricInfo(name=hparams_api_pb2.MetricName(tag=name))
                      for name in metric_dict])
    end = hparams_plugin_data_pb2.SessionEndInfo(
        status=hparams_api_pb2.Status.Value("STATUS_SUCCESS"))
    return (_plugin_summary(hparams_metadata.EXPERIMENT_TAG, experiment=experiment),
            _plugin_summary(hparams_metadata.SESSION_START_INFO_TAG, session_start_info=start),
            _plugin_summary(hparams_metadata.SESSION_END_INFO_TAG, session_end_info=end))
