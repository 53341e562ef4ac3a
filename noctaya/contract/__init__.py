"""The contract between the control plane and the data plane.

The constructs (and through them ``noctaya synth`` and the operator) and ``noctaya dev`` write the
config files that ``noctaya gateway`` and ``noctaya scaler`` read; this package is the one definition
of those files and of the signal the two data-plane processes exchange in memory. Like the shared
types of KEDA's HTTP add-on, a setting is defined here once, with its bound and its documentation, and
both its producer and its consumer build on that definition.

Owns: the gateway and aggregate scaler config files (their fields, bounds, defaults and one-line
errors), the connection bounds of a listener, the demand signal and the engine signal's section.

Modules (import the module, under one name everywhere: ``from noctaya.contract import gateway as
gateway_contract``, ``scaler as scaler_contract``, the others as themselves: ``from noctaya.contract
import fields``):

- ``fields``     primitives every file uses: ``Model`` (the base of every file model, with
                 ``Model.wire``), ``Seconds`` (a Go duration held as float seconds), ``ListenAddress`` /
                 ``Listen``, ``ServiceRef``, ``TlsFiles``
- ``documents``  ``ConfigError``, the bounded document reader and one-line-per-field error messages
- ``flags``      every setting is a flag: one naming rule and one help text for the commands
- ``files``      mounted files read safely: their identity, a non-blocking, size-bounded read of a
                 regular file, and a bounded wait for it off the event loop
- ``connections`` the connection bounds of an HTTP listener (``headerTimeout``, ``keepAliveTimeout``,
                 ``maxConnections``, ``maxConnectionsPerPeer``): the gateway's client port and the
                 aggregate scaler's report port
- ``gateway``    ``GatewaySettings`` (the tunables) and ``GatewayConfig`` (the whole gateway file)
- ``scaler``     ``ScalerConfig`` (the aggregate scaler file) and the ExternalScaler settings it
                 shares with the gateway's co-located scaler
- ``demand``     ``DemandSource`` and ``DemandSignal``: one number, its change notifications and the
                 failure contract of a listener
- ``engines``    ``EngineSignalSection`` (the ``engine`` section of either scaler: which replicas are
                 read, which gauges, against which targets, within which bounds) and ``Board``, where
                 a gateway's sidecar (the co-located scaler, or the reporter with what the aggregate
                 scaler answered) posts that signal for ``/noctaya/queue``

Must not import: anything of ``noctaya`` but ``noctaya.api.durations`` (the one Go-duration
implementation) and ``noctaya.api.gatewaymemory`` (the one rule of what a memory limit admits), nor
aiohttp, grpc, kopf, cdk8s, constructs, jsii or a Kubernetes client. Both sides import it, so it stays
small, pure and fast to import.
"""
