"""Is a recorded request allowed by the operator's rendered RBAC? The Kubernetes RBAC rules, evaluated.

A request (``apiserver.Access``) is allowed when a ClusterRoleBinding, or a RoleBinding in the request's
namespace, binds the operator's ServiceAccount to a role with a rule whose ``apiGroups``, ``resources``
and ``verbs`` all contain the request's (or ``*``). A RoleBinding never allows a cluster-wide request.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Iterable, Mapping
from typing import Any

from noctaya.api.meta import LLMSERVICE_LABEL
from noctaya.constructs import install, naming, settings, synthesis
from noctaya.operator import rendering
from tests.operator.apiserver import Access


@functools.cache
def _render(watch_namespaces: tuple[str, ...], namespace: str, leader_election: bool) -> tuple[Any, ...]:
    props = install.OperatorInstallProps(
        image=settings.DEFAULT_IMAGE,
        namespace=namespace,
        watch_namespaces=watch_namespaces,
        leader_election=leader_election,
        replicas=2 if leader_election else 1,
    )
    return tuple(synthesis.render_install(props=props))


async def rbac(*, watch_namespaces: tuple[str, ...], namespace: str, leader_election: bool) -> list[Any]:
    """The install's objects for these settings, rendered on the jsii thread (jsii is single-threaded)."""
    loop = asyncio.get_running_loop()
    return list(
        await loop.run_in_executor(
            rendering.jsii_thread(), _render, watch_namespaces, namespace, leader_election
        )
    )


def _rule_allows(rule: Mapping[str, Any], access: Access) -> bool:
    def has(key: str, value: str) -> bool:
        return value in rule.get(key, []) or "*" in rule.get(key, [])

    return has("apiGroups", access.group) and has("resources", access.resource) and has("verbs", access.verb)


def allowed(access: Access, objects: Iterable[Mapping[str, Any]]) -> bool:
    objs = list(objects)
    roles = {
        (o["kind"], o["metadata"].get("namespace"), o["metadata"]["name"]): o.get("rules") or []
        for o in objs
        if o["kind"] in {"ClusterRole", "Role"}
    }
    for binding in objs:
        if binding["kind"] not in {"ClusterRoleBinding", "RoleBinding"}:
            continue
        if not any(
            s.get("kind") == "ServiceAccount" and s.get("name") == install.NAME for s in binding["subjects"]
        ):
            continue
        where = binding["metadata"].get("namespace")
        if binding["kind"] == "RoleBinding" and access.namespace != where:
            continue
        ref = binding["roleRef"]
        role = roles.get((ref["kind"], where if ref["kind"] == "Role" else None, ref["name"]), [])
        if any(_rule_allows(rule, access) for rule in role):
            return True
    return False


def refused(accesses: Iterable[Access], objects: Iterable[Mapping[str, Any]]) -> list[Access]:
    objs = list(objects)
    return sorted((a for a in accesses if not allowed(a, objs)), key=repr)


_TOKEN_SUFFIX = naming.ServiceIdentity(name="x", namespace="x").scaler_token.removeprefix("x")


def foreign_secret_requests(requests: Iterable[tuple[Access, str, str]]) -> list[tuple[Access, str, str]]:
    """The operator's requests on Secrets that could touch a Secret it neither owns nor would own.

    RBAC cannot narrow ``list``/``watch`` by label or ``get`` to names it does not know in advance, so
    this holds the code to it: every list and watch selects the LLMService label, and every request on
    one Secret names an LLMService's scaler token (``<name>-scaler-token``: read back, created once,
    pruned; read also when someone else's object holds the name, to refuse it).
    """
    foreign = []
    for access, name, selector in requests:
        if access.verb in {"list", "watch"}:
            parts = [part.strip() for part in selector.split(",")]
            ok = any(p == LLMSERVICE_LABEL or p.startswith(f"{LLMSERVICE_LABEL}=") for p in parts)
        elif access.verb == "create":
            ok = name == ""  # a POST names its object in the body: checked by what it creates
        else:
            ok = name.endswith(_TOKEN_SUFFIX) and len(name) > len(_TOKEN_SUFFIX)
        if not ok:
            foreign.append((access, name, selector))
    return sorted(foreign, key=repr)
