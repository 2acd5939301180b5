"""Specs ``openfn deploy`` accepts import as the deploy reads them, and what Planwright
does not edit (project name, description, channels, trigger keys, workflow fields)
survives an export."""

from __future__ import annotations

import itertools

import pytest
from ruamel.yaml import YAML

from tools.document.openfn import (
    export_workflow,
    from_cli_workflow,
    from_lightning_yaml,
    import_project,
    to_cli_workflow,
    to_lightning_project,
)
from tools.errors import DocumentError

SPEC = """\
name: lab-project
description: Lab results for the district
channels:
  results-feed:
    name: results-feed
    sink_url: https://sink.example.org/in
    enabled: true
collections:
  cache: {}
credentials:
  lab-user-lab:
    name: lab
    owner: lab-user
workflows:
  lab-results:
    name: Lab results
    concurrency: 2
    jobs:
      fetch:
        name: Fetch
        adaptor: '@openfn/language-http@7.2.10'
        credential: lab-user-lab
        body:
          path: ./jobs/fetch.js
      tidy:
    triggers:
      trigger-one:
        type: cron
        cron_expression: 0 6 * * *
    edges:
      trigger-one->fetch:
        source_trigger: trigger-one
        target_job: fetch
        condition_type: always
      fetch->tidy:
        source_job: fetch
        target_job: tidy
        condition_type: on_job_success
"""
FETCH = "get('results');\n"


def new_ids() -> object:
    counter = itertools.count(1)
    return lambda: f"id-{next(counter)}"


def imported() -> object:
    (doc,) = from_lightning_yaml(SPEC, new_id=new_ids(), files={"jobs/fetch.js": FETCH})
    return doc


def test_a_body_by_path_reads_the_given_file() -> None:
    doc = imported()
    assert doc.structure.jobs["fetch"].body == FETCH


def test_a_body_by_path_without_the_file_is_refused_naming_it() -> None:
    with pytest.raises(DocumentError) as caught:
        from_lightning_yaml(SPEC, new_id=new_ids())
    assert caught.value.details["field"] == "workflows.lab-results.jobs.fetch.body.path"
    assert "'./jobs/fetch.js', which this import was not given" in caught.value.message


def test_a_body_given_as_content_is_the_code() -> None:
    spec = SPEC.replace("path: ./jobs/fetch.js", "content: fn(state => state)")
    (doc,) = from_lightning_yaml(spec, new_id=new_ids())
    assert doc.structure.jobs["fetch"].body == "fn(state => state)"


def test_an_empty_job_entry_and_missing_enabled_follow_the_deploys_defaults() -> None:
    structure = imported().structure
    tidy = structure.jobs["tidy"]
    assert (tidy.name, tidy.adaptor, tidy.body) == ("tidy", "@openfn/language-common@latest", None)
    assert structure.triggers["trigger-one"].enabled is True
    assert all(edge.enabled for edge in structure.edges.values())


def test_project_sections_trigger_keys_and_workflow_fields_survive_a_re_export() -> None:
    doc = imported()
    project = to_lightning_project([doc])
    assert project["name"] == "lab-project"  # not the workflow's name
    assert project["description"] == "Lab results for the district"
    assert project["channels"]["results-feed"]["sink_url"] == "https://sink.example.org/in"
    assert project["collections"] == {"cache": {}}
    assert project["credentials"] == {"lab-user-lab": {"name": "lab", "owner": "lab-user"}}
    workflow = project["workflows"]["lab-results"]
    assert workflow["concurrency"] == 2
    assert list(workflow["triggers"]) == ["trigger-one"]  # not `cron`
    assert list(workflow["edges"]) == ["trigger-one->fetch", "fetch->tidy"]
    # The CLI export names the trigger's step by its key too.
    cli = to_cli_workflow(doc)
    assert cli["start"] == "trigger-one" and cli["steps"][0]["id"] == "trigger-one"

    # Through the file and back: the same project.
    text = export_workflow(doc, "lightning").text
    again = import_project(text, new_id=new_ids())
    assert again.name == "lab-project"
    assert to_lightning_project(again.workflows) == project
    assert YAML(typ="safe").load(text)["description"] == "Lab results for the district"


def test_a_project_export_keeps_the_stores_name_over_the_imported_one() -> None:
    project = to_lightning_project([imported()], project_name="Renamed")
    assert project["name"] == "Renamed"
    assert project["description"] == "Lab results for the district"


def test_a_cli_expression_that_is_a_path_reads_the_given_file() -> None:
    plan = {"steps": [{"id": "a", "adaptor": "common", "expression": "job.js"}]}
    doc = from_cli_workflow(plan, new_id=new_ids(), files={"./job.js": "fn(s => s);"})
    assert doc.structure.jobs["a"].body == "fn(s => s);"
    with pytest.raises(DocumentError) as caught:
        from_cli_workflow(plan, new_id=new_ids())
    assert caught.value.details["field"] == "steps[0].expression"
