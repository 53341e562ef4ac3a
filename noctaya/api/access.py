"""Every Kubernetes API request the operator makes, as one table: the source of its RBAC.

Each :class:`Grant` is one ``(apiGroup, resource, verbs)`` the operator's code calls and where:

- ``CLUSTER``: cluster-scoped objects (InferenceRuntimes; the KEDA ScaledObject CRD, watched by name);
- ``SCAN``: Namespaces, which kopf lists and watches only when it is given namespaces to watch;
- ``WATCHED``: namespaced objects in the namespaces the operator watches (LLMServices, what they own,
  their Pods and Events) — a ClusterRole when it watches every namespace, one Role per namespace when it
  is given ``--namespace``;
- ``LEASE``: the leader-election Lease in the operator's own namespace (absent without leader election).

The operator's install (``noctaya.constructs.install``) renders its ClusterRole and Roles from this table
and nothing else; the operator tests record every request the operator sends to the API server and
check that each is allowed by the rendered RBAC and that every verb here is used. It lives in ``api``
(the lowest layer) because both the constructs and the operator read it.

Discovery (``GET /api``, ``/apis``, ``/apis/<group>/<version>``) is a non-resource URL every
authenticated client may read (the ``system:discovery`` ClusterRole), so it needs no grant here.
"""

from __future__ import annotations

import dataclasses
import enum
from typing import Final

from noctaya.api import meta


class Scope(enum.Enum):
    CLUSTER = "cluster"
    #: cluster-scoped, needed only when the operator watches given namespaces
    SCAN = "scan"
    WATCHED = "watched"
    LEASE = "lease"


@dataclasses.dataclass(frozen=True, kw_only=True)
class Grant:
    """One resource (``plural`` or ``plural/subresource``) of one API group and the verbs used on it."""

    group: str
    resource: str
    verbs: tuple[str, ...]
    scope: Scope
    #: which code sends these requests (for the reader of the RBAC)
    why: str
    #: False: the operator sends no such request; the API server checks the grant on its behalf
    #: (an admission plugin, see ``why``)
    sent: bool = True


#: the objects an LLMService owns, all carrying the ``serving.noctaya.io/llmservice`` label the
#: operator's watches select on; ``list``/``watch`` are kopf's labelled watches, ``get`` reads an object
#: the watch has not shown (is a name it needs held by an object it does not control?), ``patch`` is
#: server-side apply (and ``create``: the API server authorizes an apply that creates its object as a
#: create too), ``create`` the create-once objects, ``delete`` pruning (``noctaya.operator.applying``)
#: of what a spec change, or an earlier version of the operator, rendered and the current spec does not
_OWNED_APPLIED: Final = ("list", "watch", "get", "patch", "create", "delete")
_OWNED_CREATE_ONCE: Final = ("list", "watch", "create", "get", "delete")
#: Secrets are read by name only (the scaler token ``<name>-scaler-token``), never listed or watched: a
#: ClusterRole that lists Secrets reads every Secret of the cluster
_OWNED_SECRET: Final = ("get", "create", "delete")

GRANTS: Final[tuple[Grant, ...]] = (
    Grant(
        group=meta.GROUP,
        resource="inferenceruntimes",
        verbs=("list", "watch"),
        scope=Scope.CLUSTER,
        why="kopf watch (runtime selection)",
    ),
    Grant(
        group="apiextensions.k8s.io",
        resource="customresourcedefinitions",
        verbs=("list", "watch"),
        scope=Scope.CLUSTER,
        why="kopf watch of scaledobjects.keda.sh by name: is KEDA installed",
    ),
    Grant(
        group="",
        resource="namespaces",
        verbs=("list", "watch"),
        scope=Scope.SCAN,
        why="kopf's namespace scan (which of the watched namespaces exist)",
    ),
    Grant(
        group=meta.GROUP,
        resource="llmservices",
        verbs=("list", "watch"),
        scope=Scope.WATCHED,
        why="kopf watch and index",
    ),
    Grant(
        group=meta.GROUP,
        resource="llmservices/status",
        verbs=("patch",),
        scope=Scope.WATCHED,
        why="status conditions (merge patch of the status subresource)",
    ),
    Grant(
        group=meta.GROUP,
        resource="llmservices/finalizers",
        verbs=("update",),
        scope=Scope.WATCHED,
        why="owner references with blockOwnerDeletion on every owned object: the "
        "OwnerReferencesPermissionEnforcement admission plugin (OpenShift enables it) requires it",
        sent=False,
    ),
    Grant(group="apps", resource="deployments", verbs=_OWNED_APPLIED, scope=Scope.WATCHED, why="owned"),
    Grant(group="", resource="services", verbs=_OWNED_APPLIED, scope=Scope.WATCHED, why="owned"),
    Grant(group="", resource="configmaps", verbs=_OWNED_APPLIED, scope=Scope.WATCHED, why="owned"),
    Grant(
        group="policy",
        resource="poddisruptionbudgets",
        verbs=_OWNED_APPLIED,
        scope=Scope.WATCHED,
        why="owned",
    ),
    Grant(group="keda.sh", resource="scaledobjects", verbs=_OWNED_APPLIED, scope=Scope.WATCHED, why="owned"),
    Grant(
        group="",
        resource="secrets",
        verbs=_OWNED_SECRET,
        scope=Scope.WATCHED,
        why="owned, create-once: the aggregate scaler token, read by name (never listed or watched)",
    ),
    Grant(
        group="",
        resource="persistentvolumeclaims",
        verbs=_OWNED_CREATE_ONCE,
        scope=Scope.WATCHED,
        why="owned, create-once: the model cache",
    ),
    Grant(
        group="batch",
        resource="jobs",
        verbs=_OWNED_CREATE_ONCE,
        scope=Scope.WATCHED,
        why="owned, create-once: prewarm and staging",
    ),
    Grant(
        group="",
        resource="pods",
        verbs=("list", "watch"),
        scope=Scope.WATCHED,
        why="labelled watch: failure diagnosis of backend Pods",
    ),
    Grant(
        group="", resource="events", verbs=("create",), scope=Scope.WATCHED, why="one Event per transition"
    ),
    Grant(
        group="coordination.k8s.io",
        resource="leases",
        verbs=("get", "create", "update"),
        scope=Scope.LEASE,
        why="leader election: read, create once, renew by replace",
    ),
)


def grants(scope: Scope) -> tuple[Grant, ...]:
    return tuple(g for g in GRANTS if g.scope is scope)
