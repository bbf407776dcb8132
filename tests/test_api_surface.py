"""Regression guard for TF 2.21's public API surface (benchmarks/tf_api_surface.py).

benchmarks/tf_api_surface.json holds TF 2.21's public names per namespace (recorded under TF) and
the ones tapeflow resolved when the report was last updated (``tapeflow_present``). Every name
recorded as present must stay present: a removed or renamed export fails here, in CI, without TF.
"""
import json
from pathlib import Path

import pytest

import tapeflow

JSON_PATH = Path(__file__).resolve().parent.parent / "benchmarks" / "tf_api_surface.json"
DATA = json.loads(JSON_PATH.read_text())


def _resolve(path):
    obj = tapeflow
    for part in path.split(".")[1:]:
        obj = getattr(obj, part)
    return obj


@pytest.mark.parametrize("ns", sorted(DATA["tapeflow_present"]))
def test_present_names_stay_present(ns):
    names = DATA["tapeflow_present"][ns]
    if not names:
        return
    mod = _resolve(ns)
    lost = [n for n in names if not hasattr(mod, n)]
    assert not lost, (f"{ns}: {len(lost)} name(s) that tapeflow exported when benchmarks/tf_api_surface.json "
                      f"was recorded are gone: {lost}. Restore them, or rerun `python benchmarks/"
                      f"tf_api_surface.py --update-json` if the removal is deliberate")


def test_report_is_consistent_with_tf_names():
    # the guard's names are TF's names: a present name TF does not export would be a typo in the JSON
    for ns, names in DATA["tapeflow_present"].items():
        assert set(names) <= set(DATA["namespaces"][ns]), ns
    assert DATA["tf_version"].startswith("2.21")
    assert len(DATA["namespaces"]["tf"]) > 250
