"""Every name ember takes from the ``tensorboard`` package, imported in one place so that a
missing package gives one clear message."""
try:
    from google.protobuf import struct_pb2
    from tensorboard.compat.proto import event_pb2, graph_pb2, summary_pb2, types_pb2
    from tensorboard.compat.proto.attr_value_pb2 import AttrValue
    from tensorboard.compat.proto.node_def_pb2 import NodeDef
    from tensorboard.compat.proto.tensor_pb2 import TensorProto
    from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto
    from tensorboard.compat.proto.versions_pb2 import VersionDef
    from tensorboard.plugins.hparams import api_pb2 as hparams_api_pb2
    from tensorboard.plugins.hparams import metadata as hparams_metadata
    from tensorboard.plugins.hparams import plugin_data_pb2 as hparams_plugin_data_pb2
    from tensorboard.plugins.text import plugin_data_pb2 as text_plugin_data_pb2
    from tensorboard.summary.writer.event_file_writer import EventFileWriter
except ImportError as error:  # pragma: no cover - exercised in a subprocess by the tests
    raise ImportError(
        "ember.utils.tensorboard writes TensorBoard event files with the tensorboard package, "
        "which is not installed (or too old): pip install tensorboard "
        f"(or pip install 'ember[tensorboard]'). The import failed with: {error}") from error

Event = event_pb2.Event
SessionLog = event_pb2.SessionLog
Summary = summary_pb2.Summary
SummaryMetadata = summary_pb2.SummaryMetadata
HistogramProto = summary_pb2.HistogramProto
GraphDef = graph_pb2.GraphDef

__all__ = ["AttrValue", "Event", "EventFileWriter", "GraphDef", "HistogramProto", "NodeDef",
           "SessionLog", "Summary", "SummaryMetadata", "TensorProto", "TensorShapeProto",
           "VersionDef", "hparams_api_pb2", "hparams_metadata", "hparams_plugin_data_pb2",
           "struct_pb2", "text_plugin_data_pb2", "types_pb2"]
