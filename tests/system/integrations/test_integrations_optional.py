"""The integrations do not make transformers or lm-eval required: with their imports blocked,
``workbench`` and ``workbench.integrations.*`` import, and calling what needs them says which
extra to install."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

BLOCKED = ("transformers", "tokenizers", "lm_eval", "datasets")

_SCRIPT = textwrap.dedent(
    """
    import json, sys

    BLOCKED = set(sys.argv[1].split(","))

    class Block:
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in BLOCKED:
                raise ModuleNotFoundError(f"No module named {name!r} (blocked by the test)", name=name)
            return None

    sys.meta_path.insert(0, Block())

    import workbench
    import workbench.integrations
    import workbench.integrations.hf as hf
    import workbench.integrations.lm_eval as wb_lm_eval

    report = {"loaded": sorted(m for m in sys.modules if m.split(".")[0] in BLOCKED | {"torch"}),
              "task_dir": str(wb_lm_eval.task_dir()),
              "scores": hf.score_pairs(["37.5"], ["37.5%"])}
    for name, call in (("hf", lambda: hf.make_compute_metrics(object())), ("lmeval", wb_lm_eval.load_docs)):
        try:
            call()
        except ImportError as exc:
            report[name] = [type(exc).__name__, str(exc)]
    print(json.dumps(report))
    """
)


def test_imports_work_without_the_extras() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _SCRIPT, ",".join(BLOCKED)], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["loaded"] == []
    assert report["task_dir"].endswith("lm_eval_tasks")
    assert report["scores"]["numeric_match"] == 1.0  # grading itself needs neither
    assert report["hf"][0] == "MissingExtraError"
    assert "'transformers'" in report["hf"][1] and "pip install 'workbench[hf]'" in report["hf"][1]
    assert report["lmeval"][0] == "MissingExtraError"
    assert "'datasets'" in report["lmeval"][1] and "pip install 'workbench[lmeval]'" in report["lmeval"][1]
