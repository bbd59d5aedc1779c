"""The ONNX section of notebooks/04_end_to_end.ipynb: squeezenet from the onnx wheel
(a light model and its stored output), given random weights, its first block compiled,
checked against onnxruntime and timed against it."""
from nbformat.v4 import new_code_cell, new_markdown_cell

MD, CODE = new_markdown_cell, new_code_cell

ONNX = [
    MD("## A real network from an ONNX file\n\n"
       "Models usually arrive from a training framework, exported to an exchange format. "
       "**ONNX** is the most common one: a file holds a graph of standard operators "
       "(`Conv`, `Relu`, `MaxPool`, `Concat` ...) and the weights. "
       "`relax.frontend.onnx.from_onnx` translates such a graph into a Relax module of "
       "high-level operators, exactly like the one `export_tvm` gave us; from there "
       "the path is the one we just took.\n\n"
       "The `onnx` package ships a few networks for its own tests. "
       "`relay.testing.light_model_case` loads one of them with the input and the "
       "output stored beside it. We take **squeezenet**, a classifier of 224x224 "
       "images built from \"fire\" modules: a 1x1 convolution that *squeezes* the "
       "channels, followed by 1x1 and 3x3 convolutions side by side whose outputs are "
       "concatenated."),
    CODE('''from collections import Counter

import onnx
import onnxruntime
from mlcbench.relax.frontend.onnx import from_onnx
from mlcbench.relay.testing import light_model_case

squeezenet, squeezenet_inputs, stored_output = light_model_case("squeezenet")
print(Counter(node.op_type for node in squeezenet.graph.node))
print({name: x.shape for name, x in squeezenet_inputs.items()}, "->", stored_output.shape)'''),
    MD("These are **light** models: to keep the wheel small, every large weight was "
       "replaced by a `ConstantOfShape` node that fills the tensor with one value. The "
       "graph is the real one; the numbers are not. That is why the stored output is "
       "flat: every one of the 1000 classes gets probability 0.001. onnxruntime, the "
       "reference ONNX runtime, reproduces it."),
    CODE('''print(squeezenet.graph.node[2])
print("stored output: min", stored_output.min(), "max", stored_output.max())


def onnxruntime_session(model):
    return onnxruntime.InferenceSession(model.SerializeToString(),
                                        providers=["CPUExecutionProvider"])


np.testing.assert_allclose(onnxruntime_session(squeezenet).run(None, squeezenet_inputs)[0],
                           stored_output, rtol=1e-5)
print("onnxruntime reproduces the stored output")'''),
    MD("A flat output would hide most mistakes (transposed weights, swapped channels), "
       "so we give the network random weights of a sensible scale, one initializer per "
       "`ConstantOfShape`. And building all 26 convolutions of squeezenet takes about "
       "a minute on a small machine (each distinct kernel is scheduled and compiled "
       "by LLVM), so this notebook compiles its first block: the stem "
       "(convolution, relu, max pooling) and the first fire module, cut out with "
       "`onnx.utils.Extractor`. The same code compiles the whole network when you "
       "have the minute: replace `\"r9\"` by the model's output name."),
    CODE('''from onnx import numpy_helper


def with_random_weights(model, seed=0):
    """model with each ConstantOfShape weight replaced by a random initializer."""
    rng = np.random.default_rng(seed)
    model = onnx.shape_inference.infer_shapes(model)
    shapes = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    nodes = []
    for node in model.graph.node:
        if node.op_type != "ConstantOfShape":
            nodes.append(node)
            continue
        shape = tuple(int(d) for d in shapes[node.input[0]])
        fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else 1
        weight = (rng.standard_normal(shape) / np.sqrt(fan_in)).astype("float32")
        model.graph.initializer.append(numpy_helper.from_array(weight, node.output[0]))
    del model.graph.node[:]
    model.graph.node.extend(nodes)
    return model


stem = onnx.utils.Extractor(with_random_weights(squeezenet)).extract_model(["data_0"], ["r9"])
print([node.op_type for node in stem.graph.node])'''),
    MD("`from_onnx` turns the ONNX graph into Relax. By default the weights become "
       "constants of the module (as if `BindParams` had run), so `main` takes the image "
       "only; `keep_params_in_input=True` would keep them as parameters instead."),
    CODE('''stem_mod = from_onnx(stem)
for line in stem_mod["main"].script().splitlines()[:12]:
    print(line[:120])
print("kernels after fusion:", kernels(relax.get_pipeline("zero")(stem_mod)))'''),
    MD("Every `Conv` + bias + `Relu` became one fused kernel; the max pooling and the "
       "concatenation are kernels of their own. Building compiles each of them (this is "
       "the slow step), then we run the block on the stored input and compare with "
       "onnxruntime on the same cut-out model."),
    CODE('''stem_vm = relax.VirtualMachine(relax.build(stem_mod, target="llvm"), tvm.cpu())
image = squeezenet_inputs["data_0"]
ours = stem_vm["main"](tvm.nd.array(image)).numpy()
stem_session = onnxruntime_session(stem)
reference = stem_session.run(None, {"data_0": image})[0]
np.testing.assert_allclose(ours, reference, rtol=1e-4, atol=1e-4)
print(ours.shape, "matches onnxruntime; largest difference", float(np.abs(ours - reference).max()))'''),
    MD("And the two side by side, with the same interleaved timing as before. "
       "onnxruntime is an optimized runtime with hand-written convolution kernels, the "
       "equivalent of numpy's BLAS for this model; our kernels have default schedules "
       "only."),
    CODE('''image_nd = tvm.nd.array(image)
times = timing.compare({"mlcbench": timing.kernel(stem_vm, "main", image_nd),
                        "onnxruntime": timing.call(lambda: stem_session.run(None, {"data_0": image}))},
                       rounds=5, min_repeat_ms=20, settle_ms=50)
print(times.describe("mlcbench", "onnxruntime"))'''),
]
