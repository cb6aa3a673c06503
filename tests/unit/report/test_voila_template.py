"""The Voila settings and page template ``workbench triage`` serves with (issue 33, point 6): the
settings name the workbench template, take no template from the URL and start a kernel ahead of the
page; the template names no other host; a missing template is refused in one line. (What a page
actually requests: tests/system/browser/test_triage_voila_page.py.)"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from workbench.errors import UsageError
from workbench.report import templates

FOLDER = Path(templates.__file__).resolve().parent / "voila_template"
#: Any URL with a host (http://, https://, protocol-relative //host/...).
_URL = re.compile(r"(?:https?:)?//[\w.-]+\.\w+", re.IGNORECASE)


def test_the_settings_name_the_template_and_start_a_kernel_ahead() -> None:
    settings = json.loads(templates.VOILA_SETTINGS.read_text(encoding="utf-8"))["VoilaConfiguration"]
    assert settings == {
        "template": templates.VOILA_TEMPLATE,
        "allow_template_override": "NO",  # ?template=lab would bring the CDN links back
        "preheat_kernel": True,
        "default_pool_size": 1,
    }


def test_the_template_extends_voilas_lab_page_and_names_no_other_host() -> None:
    assert json.loads((FOLDER / "conf.json").read_text(encoding="utf-8")) == {"base_template": "lab"}
    for name in ("index.html.j2", "page.html"):
        assert not _URL.findall((FOLDER / name).read_text(encoding="utf-8")), name


def test_voila_finds_the_installed_template_and_a_missing_one_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    templates.check_voila_template()  # make setup linked it (a wheel installs it as data files)
    monkeypatch.setattr(templates, "VOILA_TEMPLATE", "no-such-template")
    with pytest.raises(UsageError) as refused:
        templates.voila_command()
    assert str(refused.value) == (
        "Voila's page template 'no-such-template' is not installed in this environment. Fix: run 'make setup' "
        "in the checkout, or install the workbench wheel (pip install workbench-*.whl)"
    )
