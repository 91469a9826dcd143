# Compiles the CPython WASI module into machine code for this machine, with wasmtime's own
# compiler from its PyPI wheel, set up as llmtool's wasmtime (no compiler of its own) loads
# it: epoch interruption on; no GC, threads, component model or other proposal the module
# does not use, since a module compiled with a feature the loading engine lacks is refused.
#
# Arguments: the folder holding the wheel's `wasmtime` package, the module, the output file
# (created: an existing file is an error).
import sys

sys.path.insert(0, sys.argv[1])

import wasmtime  # noqa: E402
from wasmtime import _ffi  # noqa: E402

config = wasmtime.Config()
config.epoch_interruption = True
for feature in (
    "wasm_gc",
    "gc_support",
    "wasm_threads",
    "wasm_component_model",
    "wasm_function_references",
    "wasm_exceptions",
    "wasm_stack_switching",
    "wasm_memory64",
    "wasm_multi_memory",
    "wasm_relaxed_simd",
    "wasm_tail_call",
    "wasm_wide_arithmetic",
    "wasm_custom_page_sizes",
):
    setattr(config, feature, False)
# Component-model concurrency has no property of its own in the binding.
_ffi.wasmtime_config_concurrency_support_set(config.ptr(), False)

engine = wasmtime.Engine(config)
module = wasmtime.Module.from_file(engine, sys.argv[2])
with open(sys.argv[3], "xb") as out:
    out.write(module.serialize())
