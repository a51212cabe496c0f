"""The export stage of scripts/models (run it through that script, which finds the interpreter
that has torch and installs it when missing).

    models_export.py --out DIR [--only NAME,NAME] [--force]

Per network of models_zoo.NAMES it writes, under DIR/NAME/:
    model.onnx                      batch 1, eval mode, static shapes, constants folded, at the
                                    highest opset of kOpsets the export accepts
    test_data_set_0/input_0.pb      the fixed random input and torch's output on it, as TensorProtos
    test_data_set_0/output_0.pb     (the layout of ONNX's own backend node tests)
    export.json                     what it printed: opset, export time, size, op types with counts,
                                    the distinct values of each op's attributes
and DIR/summary.json, every exported network's export.json in one object keyed by name. A network
whose three files already exist is not exported again unless --force. Exits 1 when any export
failed (after trying the others), 2 on bad arguments.
"""
import argparse
import collections
import json
import os
import sys
import time
import warnings

import numpy
import onnx
import onnx.numpy_helper
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import models_zoo  # noqa: E402

# Highest first. 17 is torch 1.13's newest: from it LayerNorm exports as one LayerNormalization
# instead of its ReduceMean/Sub/Pow/Sqrt/Div decomposition. 13 is the lowest the frontend's networks use.
kOpsets = (17, 16, 15, 14, 13)
kMaxAttributeValues = 24  # distinct values listed per attribute in export.json, the rest counted


def _attribute_value(attribute):
    """A JSON-able summary of one attribute: its value, or dtype and shape for a tensor."""
    value = onnx.helper.get_attribute_value(attribute)
    if isinstance(value, onnx.TensorProto):
        dtype = onnx.TensorProto.DataType.Name(value.data_type)
        return f"tensor {dtype}{list(value.dims)}"
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, (list, tuple)):
        return [v.decode("utf-8", "replace") if isinstance(v, bytes) else v for v in value]
    if isinstance(value, float):
        return float(str(numpy.float32(value)))  # as stored, shortest: 1e-05, not 9.999999747378752e-06
    return value


def describe(model):
    """Op types with counts, each op's attributes with their distinct values, and the graph's
    interface, initializers and any tensor shape inference leaves without a static shape."""
    graph = model.graph
    ops = collections.Counter(node.op_type for node in graph.node)
    attributes = collections.defaultdict(lambda: collections.defaultdict(collections.Counter))
    for node in graph.node:
        names = {a.name for a in node.attribute}
        for attribute in node.attribute:
            key = json.dumps(_attribute_value(attribute))
            attributes[node.op_type][attribute.name][key] += 1
        if not names:
            attributes[node.op_type]  # an op with no attributes is still listed
    attribute_table = {}
    for op in sorted(attributes):
        attribute_table[op] = {}
        for name, values in sorted(attributes[op].items()):
            common = values.most_common()
            listed = [{"value": json.loads(v), "count": c} for v, c in common[:kMaxAttributeValues]]
            if len(common) > kMaxAttributeValues:
                listed.append({"value": f"({len(common) - kMaxAttributeValues} other values)",
                               "count": sum(c for _, c in common[kMaxAttributeValues:])})
            if sum(values.values()) < ops[op]:  # absent on some nodes: the op's default applies
                listed.append({"value": "(absent)", "count": ops[op] - sum(values.values())})
            attribute_table[op][name] = listed

    def shape(value_info):
        dims = value_info.type.tensor_type.shape.dim
        return [d.dim_value if d.HasField("dim_value") else (d.dim_param or "?") for d in dims]

    inferred = onnx.shape_inference.infer_shapes(model)
    dynamic = [vi.name for vi in inferred.graph.value_info
               if not vi.type.tensor_type.HasField("shape")
               or any(not d.HasField("dim_value") for d in vi.type.tensor_type.shape.dim)]
    initializer_types = collections.Counter(
        onnx.TensorProto.DataType.Name(t.data_type) for t in graph.initializer)
    return {
        "nodes": len(graph.node),
        "op_types": dict(sorted(ops.items(), key=lambda kv: (-kv[1], kv[0]))),
        "attributes": attribute_table,
        "inputs": {vi.name: shape(vi) for vi in graph.input},
        "outputs": {vi.name: shape(vi) for vi in graph.output},
        "initializers": len(graph.initializer),
        "initializer_types": dict(initializer_types),
        "parameters": int(sum(numpy.prod(t.dims, dtype=numpy.int64) for t in graph.initializer)),
        # Tensors whose shape ONNX's shape inference (1.12, with or without data propagation)
        # cannot tell, because it depends on Shape arithmetic the exporter left unfolded.
        "tensors_without_static_shape": dynamic,
    }


def _first_tensor(output):
    """The network's output tensor (a scripted GoogLeNet, for one, returns a named tuple)."""
    while isinstance(output, (tuple, list)):
        output = output[0]
    return output


def export_one(name, directory):
    """Exports one network into directory; returns its export.json object. Raises on failure
    with every opset's reason."""
    return export_module(models_zoo.build(name), (models_zoo.example_input(name),), ["input"], directory)


def export_module(model, inputs, input_names, directory):
    """Exports any eval-mode module called as model(*inputs) into directory, as export_one does a
    network (bench/fused_blocks.py's blocks, some with several inputs: input_0.pb, input_1.pb, ...
    in the order of input_names); returns its export.json object."""
    with torch.no_grad():
        expected = _first_tensor(model(*inputs))
    path = os.path.join(directory, "model.onnx")
    partial = path + ".partial"  # renamed once complete: a killed export leaves no model.onnx
    # vit_b_16's `torch._assert` on the input's size is traced as a constant: right here, the
    # shapes being static.
    warnings.filterwarnings("ignore", category=torch.jit.TracerWarning)
    failures = []
    for opset in kOpsets:
        start = time.perf_counter()
        try:
            # Exported with gradients enabled: under no_grad, torch 1.13's eval-mode
            # TransformerEncoderLayer and MultiheadAttention take their fused "fast path"
            # (aten::_transformer_encoder_layer_fwd, _native_multi_head_attention), which has no
            # ONNX symbolic. The trace is the same otherwise.
            torch.onnx.export(model, tuple(inputs), partial, opset_version=opset, do_constant_folding=True,
                              training=torch.onnx.TrainingMode.EVAL, input_names=list(input_names),
                              output_names=["output"], export_params=True)
        except Exception as error:  # noqa: BLE001 - any exporter failure means: try the next opset
            message = str(error).strip().splitlines()
            failures.append(f"opset {opset}: {type(error).__name__}: {message[0] if message else ''}")
            continue
        seconds = time.perf_counter() - start
        break
    else:
        raise RuntimeError("; ".join(failures))
    onnx_model = onnx.load(partial)
    onnx.checker.check_model(onnx_model, full_check=True)
    data = os.path.join(directory, "test_data_set_0")
    os.makedirs(data, exist_ok=True)
    tensors = {f"input_{i}.pb": (x, onnx_model.graph.input[i].name) for i, x in enumerate(inputs)}
    tensors["output_0.pb"] = (expected, onnx_model.graph.output[0].name)
    for file, (tensor, tensor_name) in tensors.items():
        proto = onnx.numpy_helper.from_array(tensor.detach().numpy(), name=tensor_name)
        with open(os.path.join(data, file), "wb") as f:
            f.write(proto.SerializeToString())
    os.replace(partial, path)
    out = expected.detach().double()
    record = {"opset": opset, "export_seconds": round(seconds, 2),
              "size_bytes": os.path.getsize(path),
              "torch": torch.__version__, "onnx": onnx.__version__,
              # The scale a relative error of the check is taken against.
              "output_abs_max": out.abs().max().item(), "output_std": out.std().item()}
    if failures:
        record["failed_opsets"] = failures
    record.update(describe(onnx_model))
    return record


def merge(networks):
    """Every network's op types and attribute values in one table: per op, its nodes and the
    networks it appears in; per attribute, each distinct value with its count of nodes."""
    ops = collections.defaultdict(lambda: {"nodes": 0, "networks": []})
    values = collections.defaultdict(lambda: collections.defaultdict(collections.Counter))
    for name, record in networks.items():
        for op, count in record["op_types"].items():
            ops[op]["nodes"] += count
            ops[op]["networks"].append(name)
        for op, attributes in record["attributes"].items():
            for attribute, listed in attributes.items():
                for entry in listed:
                    values[op][attribute][json.dumps(entry["value"])] += entry["count"]
    attributes = {op: {a: [{"value": json.loads(v), "count": c} for v, c in counter.most_common()]
                       for a, counter in sorted(values[op].items())} for op in sorted(values)}
    return {"op_types": dict(sorted(ops.items(), key=lambda kv: (-kv[1]["nodes"], kv[0]))),
            "attributes": attributes}


def _exported(directory):
    files = ("model.onnx", "export.json", "test_data_set_0/input_0.pb", "test_data_set_0/output_0.pb")
    return all(os.path.isfile(os.path.join(directory, f)) for f in files)


def _print_line(name, record, skipped):
    ops = ", ".join(f"{op} {n}" for op, n in record["op_types"].items())
    note = " (already exported)" if skipped else ""
    fallback = f"; {'; '.join(record['failed_opsets'])}" if record.get("failed_opsets") else ""
    print(f"{name}: opset {record['opset']}, {record['export_seconds']:.1f} s, "
          f"{record['size_bytes'] / 1e6:.1f} MB, {record['nodes']} nodes: {ops}{note}{fallback}",
          flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", required=True, help="the networks' folder (scripts/models: runs/models)")
    parser.add_argument("--only", default="", help="comma-separated network names (default: all)")
    parser.add_argument("--force", action="store_true", help="export again networks already exported")
    args = parser.parse_args()
    names = [n for n in args.only.split(",") if n] or models_zoo.NAMES
    unknown = [n for n in names if n not in models_zoo.NAMES]
    if unknown:
        print(f"scripts/models: unknown network {', '.join(unknown)} (known: {', '.join(models_zoo.NAMES)})",
              file=sys.stderr)
        return 2
    torch.set_num_threads(max(1, os.cpu_count() or 1))
    failed = []
    for name in names:
        directory = os.path.join(args.out, name)
        skipped = not args.force and _exported(directory)
        if not skipped:
            os.makedirs(directory, exist_ok=True)
            if os.path.exists(os.path.join(directory, "export.json")):  # stale once re-exported
                os.remove(os.path.join(directory, "export.json"))
            try:
                record = export_one(name, directory)
            except Exception as error:  # noqa: BLE001 - reported per network, the others go on
                print(f"{name}: export failed: {type(error).__name__}: {error}", flush=True)
                failed.append(name)
                continue
            with open(os.path.join(directory, "export.json"), "w") as f:
                json.dump(record, f, indent=1)
        with open(os.path.join(directory, "export.json")) as f:
            record = json.load(f)
        _print_line(name, record, skipped)
    # The summary holds every network exported so far, not only this run's.
    networks = {}
    for name in models_zoo.NAMES:
        directory = os.path.join(args.out, name)
        if _exported(directory):
            with open(os.path.join(directory, "export.json")) as f:
                networks[name] = json.load(f)
    summary = {"networks": networks, "all_networks": merge(networks)}
    with open(os.path.join(args.out, "summary.json"), "w") as f:
        json.dump(summary, f, indent=1)
    ops = summary["all_networks"]["op_types"]
    print(f"across {len(networks)} networks: " +
          ", ".join(f"{op} {v['nodes']} ({len(v['networks'])})" for op, v in ops.items()), flush=True)
    if failed:
        print(f"scripts/models: {len(failed)} export(s) failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
