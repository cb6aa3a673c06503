"""Run configuration: what to grade, resolved and validated in one place.

Notebook templates pass their scalar parameters to :func:`resolve`; empty strings mean
"the bundled data", so a template runs as it is on a fresh clone, and after ``pip install`` from
any folder: the bundled paths (``data/...``) are found in the checkout, else in the demo set the
package ships (:func:`data_root`).
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from workbench.errors import UsageError
from workbench.grading.policies import DEFAULT_GRADING_POLICY, GradingPolicy
from workbench.io.predictions import ColumnMap, default_system_name, parse_column_map

__all__ = [
    "RunConfig",
    "resolve",
    "project_root",
    "checkout_root",
    "data_root",
    "PROJECT_VARIABLE",
    "BUNDLED_DATASET",
    "BUNDLED_PREDICTIONS",
    "BUNDLED_SYSTEM",
    "DEFAULT_ANNOTATION_STORE",
    "annotation_store_path",
    "split_list",
    "locate",
    "system_names",
    "BENCHMARKS",
    "NO_DATASET",
]

BUNDLED_DATASET = "data/convfinqa/dev.json"
BUNDLED_PREDICTIONS = "data/predictions/convfinqa/zarifaziz-claude-sonnet-4-6/2026-05-04T06-35-00Z/predictions.jsonl"
BUNDLED_SYSTEM = "claude-sonnet-4-6"
#: The annotation store the triage notebook and ``workbench annotations`` use by default:
#: beside the reports (``make clean`` removes the report folders, not this file).
DEFAULT_ANNOTATION_STORE = "reports/annotations.sqlite"


#: The environment variable naming the project folder (``reports/``, the annotation store) when
#: it is not the current one: ``workbench triage`` sets it for Voila, whose kernel runs in the
#: template's folder inside the installed package.
PROJECT_VARIABLE = "WORKBENCH_PROJECT"


def checkout_root() -> Path | None:
    """The repository the package was installed from in place (``pip install -e``; it holds
    ``data/SOURCES.md``), else ``None`` (an installed wheel)."""
    here = Path(__file__).resolve().parents[1]
    try:
        if (here / "data" / "SOURCES.md").exists():
            return here
    except OSError:  # a checkout this user may not read (another user's 0700 folder)
        pass
    return None


def project_root() -> Path:
    """The project folder: reports go to its ``reports/``, the annotation store is
    ``reports/annotations.sqlite`` under it, and template kernels run in it.

    The folder named by the environment variable :data:`PROJECT_VARIABLE` when set, else the
    repository the package was installed from in place (``pip install -e``), else the current
    folder (an installed wheel: the analyst's own project)."""
    named = os.environ.get(PROJECT_VARIABLE, "").strip()
    if named:
        return Path(named).expanduser().absolute()
    return checkout_root() or Path.cwd()


def data_root() -> Path | None:
    """Where the bundled ``data/...`` paths point: the checkout's ``data/`` folder, else the demo
    set in the installed package (``workbench/demo/``: the ConvFinQA dev set and the two
    claude-sonnet-4-6 runs, mapped from ``data/`` by the build, with ``SOURCES.md``), else ``None``.

    Examples
    --------
    >>> (data_root() / "SOURCES.md").is_file()
    True
    """
    checkout = checkout_root()
    if checkout is not None:
        return checkout / "data"
    demo = Path(__file__).resolve().parent / "demo"
    return demo if (demo / "SOURCES.md").is_file() else None


@dataclass(frozen=True, kw_only=True)
class RunConfig:
    """What one grading run reads.

    Attributes
    ----------
    dataset
        The gold file; ``None`` when the gold travels inside the prediction files.
    predictions
        Prediction files, one system each.
    systems
        A name per prediction file, or ``None`` to name it after the file.
    column_maps
        A map per prediction file, or ``None`` to recognise the file's shape.
    policy
        The main grading policy (every named policy is also computed, side by side).
    benchmark
        ``auto`` (from the data), ``convfinqa``, ``gsm8k`` or ``math``.
    dataset_default
        No dataset was named for prediction files that were given: ``dataset`` is the bundled
        ConvFinQA dev set standing in, and when no prediction row is on it, the gold the rows
        carry is graded against instead (rule 3 of :func:`resolve`, applied by
        :func:`workbench.pipeline.run.grade_run`).
    """

    dataset: Path | None
    predictions: tuple[Path, ...]
    systems: tuple[str | None, ...]
    column_maps: tuple[ColumnMap | None, ...]
    policy: GradingPolicy = field(default=DEFAULT_GRADING_POLICY)
    benchmark: str = "auto"
    dataset_default: bool = False


#: Benchmarks ``--benchmark`` accepts.
BENCHMARKS = ("auto", "convfinqa", "gsm8k", "math")
#: What ``dataset`` says when the gold travels inside the outputs.
NO_DATASET = "none"


def annotation_store_path(store: str | Path = "") -> Path:
    """The annotation store to use: the one given, else :data:`DEFAULT_ANNOTATION_STORE`
    under the project root.

    Examples
    --------
    >>> annotation_store_path("x/a.sqlite").as_posix()
    'x/a.sqlite'
    >>> annotation_store_path().name
    'annotations.sqlite'
    """
    return Path(store).expanduser() if str(store).strip() else project_root() / DEFAULT_ANNOTATION_STORE


def split_list(text: str) -> list[str]:
    """Split a ``;``-separated parameter into its non-empty parts.

    Examples
    --------
    >>> split_list("a.jsonl; b.csv;")
    ['a.jsonl', 'b.csv']
    """
    return [p.strip() for p in text.split(";") if p.strip()]


def locate(path: str | Path) -> Path:
    """Where a relative input path points: from the current directory when it is there,
    else from the project root, else (a bundled ``data/...`` path) from :func:`data_root`,
    else as given (so the error that follows names it as the user wrote it).

    Examples
    --------
    >>> locate(BUNDLED_DATASET) == project_root() / BUNDLED_DATASET or locate(BUNDLED_DATASET).exists()
    True
    >>> locate("no/such/file.json").as_posix()
    'no/such/file.json'
    """
    found = Path(path).expanduser()
    if found.is_absolute() or found.exists():
        return found
    root = project_root()
    if (root / found).exists():
        return root / found
    data = data_root()
    if data is not None and found.parts[:1] == ("data",) and (data.joinpath(*found.parts[1:])).exists():
        return data.joinpath(*found.parts[1:])
    return found


def system_names(paths: Sequence[str | Path]) -> tuple[str, ...]:
    """The name of each prediction file's system when none is given (``--system``, a
    ``system`` column): the one rule of ``workbench grade``, ``workbench report`` and the
    templates.

    Each file is named by :func:`~workbench.io.predictions.default_system_name` from its
    absolute path: its stem, or its folder for a generic name (``predictions.jsonl``) or an
    lm-eval log (``<model>/samples_<task>_<time>.jsonl``: the folder is the model), so a file
    given as ``samples_gsm8k_...jsonl`` from inside its folder has the name it has from
    anywhere else. Files of one run that would share a name are told apart: a folder's name
    with the file's own part after an ``@`` (``model@gsm8k_2025-...``, as a run folder gives
    ``model@<time>``), a file's name with its folder first (``run-a/tora-70b``). Any name still
    shared is refused when the files are read (name them with ``--system``).

    Examples
    --------
    >>> system_names(["/runs/llama-7b/samples_gsm8k_2025-09-09T13-42-42.857006.jsonl", "/out/tora-70b.jsonl"])
    ('llama-7b', 'tora-70b')
    >>> system_names(["/runs/llama-7b/samples_gsm8k_2025-09-09T13-42-42.jsonl",
    ...               "/runs/llama-7b/samples_gsm8k_2025-09-10T08-00-00.jsonl"])
    ('llama-7b@gsm8k_2025-09-09T13-42-42', 'llama-7b@gsm8k_2025-09-10T08-00-00')
    >>> import contextlib, tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     (Path(tmp) / "llama-7b").mkdir()
    ...     with contextlib.chdir(Path(tmp) / "llama-7b"):  # the file given from inside its folder
    ...         system_names(["samples_gsm8k_2025-09-09T13-42-42.857006.jsonl"])
    ('llama-7b',)
    """
    files = [Path(p).expanduser().absolute() for p in paths]
    names = [default_system_name(f) for f in files]
    shared = {name for name, n in Counter(names).items() if n > 1}

    def told_apart(name: str, file: Path) -> str:
        if name == file.stem:  # one file name in two folders: the folder first
            return f"{file.parent.name}/{name}" if file.parent.name else name
        own = file.stem[len("samples_") :] if file.stem.lower().startswith("samples_") else file.stem
        return f"{name}@{own}"

    return tuple(told_apart(name, f) if name in shared else name for name, f in zip(names, files, strict=True))


def _spread(name: str, values: list[str], n: int) -> list[str | None]:
    if not values:
        return [None] * n
    if len(values) == 1 and n > 1 and name == "column map":
        return values * n
    if len(values) != n:
        raise UsageError(
            f"{len(values)} {name}s for {n} prediction files. Fix: give one {name} per prediction "
            f"file, in the same order{' (or one map for all)' if name == 'column map' else ''}"
        )
    return list(values)


def resolve(
    *,
    dataset: str | Path | None = "",
    predictions: str | Path | list[str] | list[Path] = "",
    systems: str | list[str] = "",
    column_map: str | list[str] = "",
    policy: GradingPolicy = DEFAULT_GRADING_POLICY,
    benchmark: str = "auto",
) -> RunConfig:
    """Validate and complete run parameters.

    The gold is chosen by one rule, the same for ``workbench grade``, ``workbench report`` and
    the templates:

    1. a dataset named (``dataset``; ``grade``'s first FILE of two or more) is the gold;
    2. ``dataset=None`` or ``"none"``: the gold travels in the prediction files (an Inspect
       log, a GSM8K or MATH file);
    3. no dataset named (``""``) for prediction files given (``grade FILE``,
       ``report --predictions FILE``): the bundled ConvFinQA dev set when some prediction row
       is on it, else the gold the rows carry, every row one (``RunConfig.dataset_default``;
       decided when the files are read, :func:`workbench.pipeline.run.grade_run`);
    4. nothing given: the bundled ConvFinQA dev set and the bundled claude-sonnet-4-6 run
       (named ``claude-sonnet-4-6``).

    Systems not named are named by :func:`system_names`. Lists may be given as Python lists or
    as ``;``-separated strings. Relative paths are taken from the current directory, then from
    the project root.

    Examples
    --------
    >>> cfg = resolve(predictions="data/predictions/gsm8k/tora/tora-70b.jsonl")
    >>> cfg.dataset_default, cfg.dataset.name
    (True, 'dev.json')
    >>> resolve(dataset="none", predictions="data/predictions/gsm8k/tora/tora-70b.jsonl").dataset is None
    True

    Raises
    ------
    UsageError
        When counts of systems or maps do not match the prediction files, or the benchmark
        is unknown.
    """
    if benchmark not in BENCHMARKS:
        raise UsageError(f"unknown benchmark {benchmark!r}. Fix: use one of {', '.join(BENCHMARKS)}")
    preds = split_list(predictions) if isinstance(predictions, str) else [str(p) for p in predictions]
    names = split_list(systems) if isinstance(systems, str) else list(systems)
    maps = split_list(column_map) if isinstance(column_map, str) else list(column_map)
    given = bool(preds)
    if not preds:
        preds = [BUNDLED_PREDICTIONS]
        names = names or [BUNDLED_SYSTEM]
    files = tuple(locate(p) for p in preds)
    no_dataset = dataset is None or str(dataset).strip().lower() == NO_DATASET
    return RunConfig(
        dataset=None if no_dataset else locate(dataset or BUNDLED_DATASET),  # type: ignore[arg-type]
        predictions=files,
        systems=tuple(_spread("system name", names, len(files))),
        column_maps=tuple(parse_column_map(m) if m else None for m in _spread("column map", maps, len(files))),
        policy=policy,
        benchmark=benchmark,
        dataset_default=given and not no_dataset and not str(dataset).strip(),
    )
