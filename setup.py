"""What pyproject.toml cannot declare: two folders of the repository mapped into the package, so
each keeps its place in the repository and stays the one source of what the package ships.

- ``notebooks/`` (the templates and the batch file ``bundled.yaml``) is ``workbench/notebooks/``;
- ``data/`` is ``workbench/demo/``, of which only the demo set ships (the files listed under
  ``[tool.setuptools.package-data]`` in pyproject.toml, with ``SOURCES.md``).

Everything else (metadata, version, dependencies, package data) is in pyproject.toml.
"""

from setuptools import find_namespace_packages, setup

MAPPED = {"workbench.notebooks": "notebooks", "workbench.demo": "data"}

packages = find_namespace_packages(include=["workbench", "workbench.*"], exclude=["*.__pycache__"])
for package, folder in MAPPED.items():
    # its sub-folders too (data/convfinqa...): setuptools ships package data only from listed packages
    packages += [package, *(f"{package}.{sub}" for sub in find_namespace_packages(where=folder))]

setup(packages=packages, package_dir=MAPPED)
