"""What pyproject.toml cannot declare: two folders of the repository mapped into the package, so
each keeps its place in the repository and stays the one source of what the package ships.

- ``notebooks/`` (the templates and the batch file ``bundled.yaml``) is ``workbench/notebooks/``;
- ``data/`` is ``workbench/demo/``, of which only the demo set ships (the files listed under
  ``[tool.setuptools.package-data]`` in pyproject.toml, with ``SOURCES.md``).

The workbench's Voila page template (``workbench/report/voila_template/``, which names no other host)
is also installed where Voila looks for templates, ``share/jupyter/voila/templates/workbench`` (a
wheel's data files); ``make setup`` links it there for a checkout installed in place.

Everything else (metadata, version, dependencies, package data) is in pyproject.toml.
"""

from pathlib import Path

from setuptools import find_namespace_packages, setup

MAPPED = {"workbench.notebooks": "notebooks", "workbench.demo": "data"}
#: The Voila template's folder in the package, and where Voila finds a template named "workbench".
VOILA_TEMPLATE = Path("workbench/report/voila_template")
VOILA_TEMPLATES = "share/jupyter/voila/templates/workbench"

packages = find_namespace_packages(include=["workbench", "workbench.*"], exclude=["*.__pycache__"])
for package, folder in MAPPED.items():
    # its sub-folders too (data/convfinqa...): setuptools ships package data only from listed packages
    packages += [package, *(f"{package}.{sub}" for sub in find_namespace_packages(where=folder))]

template = sorted(p.as_posix() for p in VOILA_TEMPLATE.iterdir() if p.is_file())

setup(packages=packages, package_dir=MAPPED, data_files=[(VOILA_TEMPLATES, template)])
