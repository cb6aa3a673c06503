"""Digest of everything the bundled data produces: graded folders and report content.

Run it before and after a change that must not change behaviour, then compare::

    python bench/outputs_digest.py --out /tmp/before.json          # on the old commit
    python bench/outputs_digest.py --out /tmp/after.json           # on the new one
    python bench/outputs_digest.py --compare /tmp/before.json /tmp/after.json

What is digested (machine paths, times and random element ids taken out; nothing else):

- ``workbench grade`` on each bundled input set: the sha256 of every Parquet file the graded
  folder holds (byte-identical) and of ``summary.json`` with its path fields (and the
  ``schema_version`` its manifest gained in the House change) removed;
- ``workbench report --config notebooks/bundled.yaml`` (into a temporary folder): each
  executed notebook's outputs (text, HTML, JSON and figures, per cell in order; an output with
  HTML is digested by its HTML, not by Jupyter's text fallback; HTML as tags, sorted attributes and
  text with whitespace collapsed), the report's
  manifest without its time and paths, the verdicts table, and the visible text of each HTML page.

Exit status: 0 when ``--compare`` finds the two digests equal, 1 otherwise (each difference
printed on one line).
"""

from __future__ import annotations

import argparse
import hashlib
import html.parser
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data"
CLAUDE = sorted((DATA / "predictions/convfinqa/zarifaziz-claude-sonnet-4-6").glob("*/predictions.jsonl"))
GRADE_SETS: dict[str, list[str]] = {
    "convfinqa": [str(DATA / "convfinqa/dev.json"), *map(str, CLAUDE), "--system", "claude-a", "--system", "claude-b"],
    "gsm8k-tora": [
        str(DATA / "gsm8k/test.jsonl"),
        *map(str, sorted((DATA / "predictions/gsm8k/tora").glob("*.jsonl"))),
    ],
    "gsm8k-pot": [
        str(DATA / "gsm8k/test.jsonl"),
        *map(str, sorted((DATA / "predictions/gsm8k/program-of-thoughts").glob("*.jsonl"))),
    ],
    "gsm8k-gpt3": [
        str(DATA / "gsm8k/test.jsonl"),
        str(DATA / "predictions/gsm8k/openai-gpt3/example_model_solutions.jsonl"),
    ],
}
#: Keys of summary.json and the report manifest left out: machine paths and times, and
#: ``schema_version`` (added by the House change; every other key and value must match).
_NOT_COMPARED = ("path", "created_at", "out", "graded_dir", "schema_version")
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)?")


#: With ``--keep DIR``: every digested text is also written there (to diff two runs).
_KEEP: list[Path] = []


def _sha(data: bytes) -> str:
    digest = hashlib.sha256(data).hexdigest()
    if _KEEP:
        (_KEEP[0] / f"{digest[:16]}.txt").write_bytes(data)
    return digest


def _scrub(text: str, roots: list[str]) -> str:
    for r in roots:
        text = text.replace(r, "<ROOT>")
    return _TIME.sub("<TIME>", _UUID.sub("<ID>", text))


def _drop_paths(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _drop_paths(v) for k, v in value.items() if k not in _NOT_COMPARED}
    if isinstance(value, list):
        return [_drop_paths(v) for v in value]
    return value


class _Canonical(html.parser.HTMLParser):
    """Markup as a sequence of tags (attributes sorted) and text runs with whitespace collapsed:
    the same page whether a template or an f-string wrote it."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []

    def handle_starttag(self, tag: str, attrs: Any) -> None:
        self.parts.append(f"<{tag} {sorted((k, ' '.join((v or '').split())) for k, v in attrs)}>")

    def handle_endtag(self, tag: str) -> None:
        self.parts.append(f"</{tag}>")

    def handle_data(self, data: str) -> None:
        if data.strip():
            self.parts.append(" ".join(data.split()))


def _canonical_html(markup: str) -> str:
    parser = _Canonical()
    parser.feed(markup)
    parser.close()
    return "\n".join(parser.parts)


class _Text(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag: str, attrs: Any) -> None:
        if tag in ("script", "style"):
            self._skip += 1

    def handle_endtag(self, tag: str) -> None:
        if tag in ("script", "style") and self._skip:
            self._skip -= 1

    def handle_data(self, data: str) -> None:
        if not self._skip and data.strip():
            self.parts.append(" ".join(data.split()))


def _graded_folder(folder: Path, roots: list[str]) -> dict[str, str]:
    out = {}
    for f in sorted(folder.iterdir()):
        if f.suffix == ".parquet":
            out[f.name] = _sha(f.read_bytes())
        elif f.name == "summary.json":
            out[f.name] = _sha(
                _scrub(json.dumps(_drop_paths(json.loads(f.read_text())), sort_keys=True), roots).encode()
            )
    return out


def _notebook_outputs(path: Path, roots: list[str]) -> list[str]:
    nb = json.loads(path.read_text())
    digests = []
    for cell in nb["cells"]:
        if cell["cell_type"] != "code" or "injected-parameters" in cell["metadata"].get("tags", []):
            continue
        parts = []
        for o in cell.get("outputs", []):
            if "text" in o:
                parts.append(_scrub("".join(o["text"]), roots))
            data_items = o.get("data", {})
            if "text/html" in data_items:  # what the page shows; text/plain is Jupyter's fallback
                data_items = {k: v for k, v in data_items.items() if k != "text/plain"}
            for mime, data in sorted(data_items.items()):
                body = (
                    data
                    if isinstance(data, str)
                    else "".join(data)
                    if isinstance(data, list)
                    else json.dumps(data, sort_keys=True)
                )
                if mime == "text/html":
                    body = _canonical_html(body)
                parts.append(mime + ":" + _scrub(body, roots))
        if parts:
            digests.append(_sha("\n".join(parts).encode()))
    return digests


def digest() -> dict[str, Any]:
    result: dict[str, Any] = {"graded": {}, "reports": {}}
    with tempfile.TemporaryDirectory(prefix="wb-digest-") as tmp:
        roots = [tmp, str(ROOT)]
        for name, args in GRADE_SETS.items():
            out = Path(tmp) / name
            subprocess.run(
                [sys.executable, "-m", "workbench.cli", "grade", *args, "--out", str(out)], check=True, cwd=ROOT
            )
            result["graded"][name] = _graded_folder(out, roots)
        config = Path(tmp) / "reports.yaml"
        config.write_text(
            "reports:\n"
            + "".join(
                f"  - template: {t}\n    out: {tmp}/rep/{t}\n"
                for t in ("01-overview", "02-error-slices", "04-compare-systems")
            )
        )
        subprocess.run(
            [sys.executable, "-m", "workbench.cli", "report", "--config", str(config), "--quiet"], check=True, cwd=ROOT
        )
        for folder in sorted((Path(tmp) / "rep").iterdir()):
            rep: dict[str, Any] = {}
            for f in sorted(folder.iterdir()):
                if f.suffix == ".ipynb":
                    rep["notebook_outputs"] = _notebook_outputs(f, roots)
                elif f.name.endswith(".manifest.json"):
                    rep["manifest"] = _drop_paths(json.loads(f.read_text()))
                elif f.suffix == ".parquet":
                    rep[f.name] = _sha(f.read_bytes())
                elif f.suffix == ".html":
                    text = _Text()
                    text.feed(f.read_text())
                    rep["html_text"] = _sha(_scrub("\n".join(text.parts), roots).encode())
                elif f.is_dir():
                    rep[f.name] = _graded_folder(f, roots)
            result["reports"][folder.name] = rep
    return result


def _diff(a: Any, b: Any, where: str) -> list[str]:
    if isinstance(a, dict) and isinstance(b, dict):
        lines = []
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                lines.append(f"{where}/{k}: only in {'after' if k in b else 'before'}")
            else:
                lines += _diff(a[k], b[k], f"{where}/{k}")
        return lines
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [line for i, (x, y) in enumerate(zip(a, b, strict=True)) for line in _diff(x, y, f"{where}[{i}]")]
    return [] if a == b else [f"{where}: {json.dumps(a)[:120]} != {json.dumps(b)[:120]}"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", help="write the digest here (JSON)")
    parser.add_argument("--keep", help="also write each digested text into this folder, named by its digest")
    parser.add_argument("--compare", nargs=2, metavar=("BEFORE", "AFTER"), help="compare two digests")
    args = parser.parse_args(argv)
    if args.compare:
        before, after = (json.loads(Path(p).read_text()) for p in args.compare)
        diffs = _diff(before, after, "")
        for line in diffs:
            print(line)
        n = sum(len(v) for v in before["graded"].values()) + sum(len(v) for v in before["reports"].values())
        print(f"{'equal' if not diffs else 'DIFFERENT'}: {len(diffs)} differences over {n} digested items")
        return 1 if diffs else 0
    if args.keep:
        _KEEP.append(Path(args.keep))
        _KEEP[0].mkdir(parents=True, exist_ok=True)
    result = digest()
    text = json.dumps(result, indent=1, sort_keys=True)
    if args.out:
        Path(args.out).write_text(text)
    else:
        print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
