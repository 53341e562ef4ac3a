"""The in-memory inventory fed by watches.

Aspects: labelled objects are grouped by their LLMService; unlabelled ones are ignored; an older echo of
an object never replaces a newer version (our write-through came first); deletion of another
incarnation (uid) keeps the current one; ``managedFields`` are dropped; dropping a service drops its
objects.
"""

from __future__ import annotations

from typing import Any

from noctaya.operator import inventory


def obj(name: str, rv: str, uid: str = "u1", service: str | None = "qwen", **extra: Any) -> dict[str, Any]:
    labels = {inventory.LABEL: service} if service else {}
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": name,
            "namespace": "ai",
            "uid": uid,
            "resourceVersion": rv,
            "labels": labels,
            "managedFields": [{"manager": "x"}],
        },
        **extra,
    }


def test_grouping_and_slimming() -> None:
    inv = inventory.Inventory()
    assert inv.put_owned(obj("a", "1")) == ("ai", "qwen")
    assert inv.put_owned(obj("b", "1", service=None)) is None
    stored = inv.find(("ai", "qwen"), "v1", "ConfigMap", "a")
    assert stored is not None and "managedFields" not in stored["metadata"]
    assert inv.owned(("ai", "qwen")) == {("v1", "ConfigMap", "a"): stored}
    assert inv.of_kind(("ai", "qwen"), "v1", "ConfigMap") == [stored]


def test_older_echo_does_not_replace_newer() -> None:
    inv = inventory.Inventory()
    inv.put_owned(obj("a", "5", data={"v": "new"}))
    inv.put_owned(obj("a", "4", data={"v": "old"}))
    found = inv.find(("ai", "qwen"), "v1", "ConfigMap", "a")
    assert found is not None and found["data"] == {"v": "new"}
    inv.put_owned(obj("a", "1", uid="u2", data={"v": "recreated"}))  # a new incarnation always wins
    found = inv.find(("ai", "qwen"), "v1", "ConfigMap", "a")
    assert found is not None and found["data"] == {"v": "recreated"}


def test_deleting_an_old_incarnation_keeps_the_new_one() -> None:
    inv = inventory.Inventory()
    inv.put_owned(obj("a", "7", uid="new"))
    inv.drop_owned(obj("a", "3", uid="old"))
    assert inv.find(("ai", "qwen"), "v1", "ConfigMap", "a") is not None
    inv.drop_owned(obj("a", "8", uid="new"))
    assert inv.owned(("ai", "qwen")) == {}


def test_dropping_a_service_drops_its_objects() -> None:
    inv = inventory.Inventory()
    key = inv.put_service({"metadata": {"name": "qwen", "namespace": "ai"}, "spec": {}})
    inv.put_owned(obj("a", "1"))
    inv.drop_service(key)
    assert key not in inv.services and not inv.owned(key)
