"""A whole project as one Lightning project.yaml: export_project / import_project."""

from __future__ import annotations

import itertools

import pytest
from ruamel.yaml import YAML

from tests.documents import REFERRAL_PROJECT
from tools.document import WorkflowDocument
from tools.document.openfn import export_project, import_project
from tools.errors import DocumentError

_COUNTER = itertools.count(1)


def _new_id() -> str:
    return f"33333333-0000-4000-8000-{next(_COUNTER):012d}"


def test_import_keeps_the_name_and_every_workflow_in_order() -> None:
    project = import_project(REFERRAL_PROJECT, new_id=_new_id)
    assert project.name == "Referral programme"
    assert [d.name for d in project.workflows] == [
        "Referral intake",
        "Document verification",
        "Status transitions",
    ]
    assert list(project.workflows[0].structure.jobs) == [
        "fetch-referral",
        "check-coverage",
        "notify-team",
    ]


def test_export_then_import_gives_the_same_file() -> None:
    first = import_project(REFERRAL_PROJECT, new_id=_new_id)
    exported = export_project(first.workflows, name="Programme")
    assert (exported.filename, exported.media_type) == ("project.yaml", "application/yaml")
    loaded = YAML(typ="safe", pure=True).load(exported.text)
    assert loaded["name"] == "Programme"
    assert loaded["workflows"] == YAML(typ="safe", pure=True).load(REFERRAL_PROJECT)["workflows"]
    again = import_project(exported.text, new_id=_new_id)
    assert export_project(again.workflows, name="Programme").text == exported.text


def test_an_empty_project_is_allowed_only_when_asked() -> None:
    empty = export_project([], name="Nothing yet")
    assert YAML(typ="safe", pure=True).load(empty.text)["workflows"] == {}
    assert import_project(empty.text, new_id=_new_id).workflows == []
    assert import_project(empty.text, new_id=_new_id).name == "Nothing yet"
    with pytest.raises(DocumentError) as caught:
        import_project(empty.text, new_id=_new_id, allow_empty=False)
    assert caught.value.details["field"] == "workflows"


def test_workflows_that_would_share_a_key_are_refused_naming_both() -> None:
    docs = [WorkflowDocument.new("Send report"), WorkflowDocument.new("Send  report!")]
    with pytest.raises(DocumentError) as caught:
        export_project(docs, name="Clash")
    assert caught.value.code == "export_id_clash"
    assert "'Send report'" in caught.value.message and "Send  report!" in caught.value.message


def test_a_bad_field_names_where_it_is() -> None:
    broken = REFERRAL_PROJECT.replace("condition_type: on_job_success", "condition_type: 7")
    with pytest.raises(DocumentError) as caught:
        import_project(broken, new_id=_new_id)
    field = caught.value.details["field"]
    assert field.startswith("workflows.referral-intake.edges.fetch-referral->check-coverage")
