"""Run by Python 3.13 for arm64 (qemu-user): the layer as built for arm64, as Lambda loads it.

``python check_layer.py LAYER FUNCTIONS EVENT`` imports every module of the runtime package from
``LAYER`` (the built layer's ``python/``, Lambda's ``/opt/python``), every function's handler
module, then calls EvaluateVerdictFunction's handler with ``EVENT``; prints one JSON object:
the machine, the modules and handlers imported, the compiled extensions loaded from the layer
(each must be aarch64), and the handler's answer. It runs with ``-S`` (no site packages): only
the layer and the runtime's boto3 (``PYTHONPATH``) are importable.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import pkgutil
import platform
import sys
from pathlib import Path


class Context:
    function_name = "EvaluateVerdictFunction"
    invoked_function_arn = "arn:aws:lambda:eu-west-1:111122223333:function:ev"
    memory_limit_in_mb = 256
    aws_request_id = "00000000-0000-0000-0000-000000000000"

    def get_remaining_time_in_millis(self) -> int:
        return 10_000


def main(layer: str, functions: str, event_file: str) -> None:
    import hyperpod_ha

    modules = sorted(m.name for m in pkgutil.walk_packages(hyperpod_ha.__path__, "hyperpod_ha."))
    for name in modules:
        importlib.import_module(name)
    handlers = {}
    for app in sorted(Path(functions).glob("*/app.py")):
        spec = importlib.util.spec_from_file_location(f"function_{app.parent.name}", app)
        assert spec is not None
        assert spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        handlers[app.parent.name] = module
    extensions = sorted(
        str(Path(module.__file__).relative_to(layer))
        for module in list(sys.modules.values())
        if getattr(module, "__file__", None)
        and str(module.__file__).endswith(".so")
        and str(module.__file__).startswith(layer)
    )
    answer = handlers["evaluate_verdict"].lambda_handler(json.loads(Path(event_file).read_text()), Context())
    print(
        json.dumps(
            {
                "machine": platform.machine(),
                "python": platform.python_version(),
                "modules": ["hyperpod_ha", *modules],
                "handlers": sorted(handlers),
                "extensions": extensions,
                "answer": answer,
            }
        )
    )


if __name__ == "__main__":
    main(*sys.argv[1:4])
