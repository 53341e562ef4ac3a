"""The serving.noctaya.io/v1alpha1 API: pydantic models, typed values and the CRDs made from them.

Owns: LLMService and InferenceRuntime models (every field, default, enum, bound and cross-field rule),
Kubernetes durations and quantities, model source URIs, runtime argument templates, CRD generation
and document validation.

Modules (import the module, not its names: ``from noctaya.api import llmservice``):

- ``meta``              group/version, ``ApiModel``, ``ObjectMeta``, ``Condition``, ``Timestamp``
- ``rules``             ``Rule`` / ``CrossFieldRule``: one rule, checked by pydantic and by the CRD's CEL
- ``scalars``           ``Scalar``: the pydantic hooks of a value type written as a Kubernetes string
- ``durations``         ``Duration`` (Go duration strings, canonical printing)
- ``quantities``        ``Quantity`` (Kubernetes quantities, canonical printing)
- ``sources``           ``parse_source`` -> ``HubSource`` | ``OciSource`` | ``PvcSource``
- ``templates``         ``check_template`` / ``render_template`` for runtime args and env values
- ``core``              structural subsets of core/v1 ``EnvVar``, ``Toleration``, ``Probe``
- ``llmservice``        ``LLMService`` and its spec/status models, phases, condition types, reasons
- ``inferenceruntime``  ``InferenceRuntime`` and its spec models, vendors, families
- ``loading``           the bounded YAML reader (sizes, depth, aliases: see ``Limits``)
- ``documents``         YAML streams -> objects or every problem (``check_stream``, ``load_resources``)
- ``crds``              CRD generation (structural schemas, CEL rules, printer columns)
- ``command``           ``noctaya validate`` and ``noctaya crds``

Must not import: anything else of ``noctaya``, kopf, cdk8s, constructs, jsii or a Kubernetes client.
Everything else builds on this package, so it stays pure and fast to import.
"""
